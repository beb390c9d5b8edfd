/**
 * Turns a coordinator's LaunchPlan into the command line a worker runs. torchrun's flags differ across
 * versions in ways that crash at start (underscore forms only on 1.13; 1.13 on Python 3.11 dies unless its
 * output streams are redirected), so every version quirk is decided here, in one place, and tested.
 * torchrun runs through GPU Share's launcher shim, so machines whose host names do not resolve to each other
 * still form a group (the plan's localAddr becomes MASTER_ADDR; see launch-network-env.ts).
 */
import path from 'node:path';
import { torchMajorVersion } from '../../../src-shared/scheduling/comm-choice';
import type { LaunchPlan } from '../../../src-shared/worker-protocol';
import { findAssetsDir } from '../assets-dir';
import { buildNetworkEnv } from './launch-network-env';
import type { InterfaceTable } from './local-interface';

export interface PythonInfo {
  path: string;
  torchVersion: string;
}

export interface TorchrunOptions {
  /** GPUs visible to this worker; what nprocPerNode 'gpu' resolves to (1 when there are none). */
  gpuCount?: number;
  /** Where torchrun keeps each rank's log files (it makes a temp dir when absent). */
  logDir?: string;
  /** The app's assets folder, which holds launcher/torchrun_shim.py (default: findAssetsDir()). */
  assetsDir?: string;
  /** The environment the training process inherits; interface variables set there are left alone (default: process.env). */
  inheritedEnv?: NodeJS.ProcessEnv;
  /** This machine's interfaces (default: os.networkInterfaces()). */
  interfaces?: InterfaceTable;
  /** Seconds the rendezvous waits for more nodes once the minimum is there (torch's default is 30). */
  lastCallTimeoutS?: number;
  /** Seconds between torchrun's checks of its ranks (torch 1.13's default is 5). */
  monitorIntervalS?: number;
}

const DEFAULT_LAST_CALL_TIMEOUT_S = 2;
const DEFAULT_MONITOR_INTERVAL_S = 0.5;

/** Major version of a torch version string ("1.13.0a0+git…" → 1); null when it cannot be read (comm-choice's rule). */
export const torchMajor = torchMajorVersion;

/**
 * torch < 2 builds its stdout/stderr redirect map with `Std.from_str`, which returns None for "0" on
 * Python 3.11 (IntFlag iteration changed) and crashes at start. Redirecting stdout to torchrun's log files and
 * teeing it back (`--redirects 1 --tee 1`) avoids the broken value, and the tee thread re-emits every line
 * whole with a `[default0]:` prefix, so ranks never interleave mid-line on our pty. torch ≥ 2 is fixed; there
 * the ranks write straight to the pty, one line per write call, which a tty keeps whole as well.
 */
export function needsRedirectWorkaround(torchVersion: string): boolean {
  const major = torchMajor(torchVersion);
  return major === null || major < 2;
}

/** Resolves nprocPerNode: 'gpu' means one process per visible GPU, or one on a CPU-only worker. */
export function resolveNproc(plan: Pick<LaunchPlan, 'nprocPerNode' | 'useGpus'>, gpuCount = 0): number {
  if (plan.nprocPerNode !== 'gpu') return plan.nprocPerNode;
  return plan.useGpus && gpuCount > 0 ? gpuCount : 1;
}

function isPythonScript(file: string): boolean {
  return /\.py$/i.test(file);
}

/** Where the launcher shim lives inside the assets folder. */
export function launcherShimPath(assetsDir: string = findAssetsDir()): string {
  return path.join(assetsDir, 'launcher', 'torchrun_shim.py');
}

/**
 * The full argv (interpreter first) of the launcher shim, which runs torch's `torch.distributed.run` after
 * making it advertise the plan's localAddr (see assets/launcher/torchrun_shim.py). Flags use the underscore
 * forms, which every torch since 1.9 accepts; a script that is not a .py file is run with `--no_python` so
 * torchrun executes it directly.
 */
export function buildTorchrunArgv(plan: LaunchPlan, python: PythonInfo, options: TorchrunOptions = {}): string[] {
  const [script, ...scriptArgs] = plan.command;
  const rdzvConf = [`last_call_timeout=${options.lastCallTimeoutS ?? DEFAULT_LAST_CALL_TIMEOUT_S}`];
  // The coordinator decides who hosts the store; torch's own guess from host names is wrong when workers
  // share a machine or names do not resolve. (The plan schema requires the field.)
  rdzvConf.push(`is_host=${plan.rdzvHost ? 1 : 0}`);
  const argv = [
    python.path,
    launcherShimPath(options.assetsDir),
    `--nnodes=${plan.nnodes}`,
    `--nproc_per_node=${resolveNproc(plan, options.gpuCount)}`,
    '--rdzv_backend=c10d',
    `--rdzv_endpoint=${plan.rdzvEndpoint}`,
    `--rdzv_id=${plan.rdzvId}`,
    `--rdzv_conf=${rdzvConf.join(',')}`,
    `--max_restarts=${plan.maxRestarts}`,
    `--monitor_interval=${options.monitorIntervalS ?? DEFAULT_MONITOR_INTERVAL_S}`,
  ];
  if (needsRedirectWorkaround(python.torchVersion)) argv.push('--redirects=1', '--tee=1');
  if (options.logDir) argv.push(`--log_dir=${options.logDir}`);
  if (script !== undefined && !isPythonScript(script)) argv.push('--no_python');
  argv.push(script ?? '', ...scriptArgs);
  return argv;
}

/**
 * The argv of the direct launcher: the command itself (a .py script through the interpreter when one is
 * known), for scripts that are not PyTorch-distributed.
 */
export function buildDirectArgv(plan: LaunchPlan, python: PythonInfo | null): string[] {
  const [script, ...rest] = plan.command;
  if (script !== undefined && isPythonScript(script) && python) return [python.path, script, ...rest];
  return [...plan.command];
}

/** Launcher variables the direct launcher sets, so a script written for torchrun still runs alone. */
export const DIRECT_LAUNCH_ENV: Readonly<Record<string, string>> = {
  RANK: '0',
  LOCAL_RANK: '0',
  GROUP_RANK: '0',
  WORLD_SIZE: '1',
  LOCAL_WORLD_SIZE: '1',
};

export interface LaunchCommand {
  argv: string[];
  /** Variables the launcher itself needs on top of the plan's env. */
  env: Record<string, string>;
  /** Lines worth logging about the launch (e.g. no interface holds the plan's address). */
  notes: string[];
}

/** Argv and launcher env for a plan, whichever launcher it names. */
export function buildLaunchCommand(plan: LaunchPlan, python: PythonInfo | null, options: TorchrunOptions = {}): LaunchCommand {
  if (plan.launcher === 'direct') return { argv: buildDirectArgv(plan, python), env: { ...DIRECT_LAUNCH_ENV }, notes: [] };
  if (!python) {
    throw new Error(
      `run ${plan.runId}: torchrun needs a Python interpreter with PyTorch and none was found on this worker. ` +
        'Install PyTorch, or set GPU_SHARE_PYTHON to an interpreter that has it, then restart the worker.',
    );
  }
  const network = buildNetworkEnv({
    localAddr: plan.localAddr ?? '',
    inherited: options.inheritedEnv ?? process.env,
    planEnv: plan.env,
    ...(options.interfaces ? { interfaces: options.interfaces } : {}),
  });
  return { argv: buildTorchrunArgv(plan, python, options), env: network.env, notes: network.notes };
}
