/**
 * The WorkerLaunch of an install: this very CLI (the Node.js running it, or the app's Electron binary as Node)
 * started as `worker --join URL [--cert-sha256 FP] --name NAME --data-dir DIR`, so a restart finds the same node
 * key and name; the Python with PyTorch found at install and this PATH pinned, since a service starts with a bare
 * environment; the token only as the path of its owner-only file.
 */
import path from 'node:path';
import { STATUS_FILE_ENV, type WorkerLaunch } from './worker-launch';
import type { ServiceLayout } from './service-layout';

export interface LaunchInput {
  layout: ServiceLayout;
  /** process.execPath. */
  execPath: string;
  /** The CLI script (dist/main/cli.cjs); absent when the executable is the CLI itself (a packaged binary). */
  cliScript?: string;
  /** Running under Electron: the service must set ELECTRON_RUN_AS_NODE. */
  electron: boolean;
  coordinator: string;
  certSha256?: string;
  node: string;
  python?: string;
  pathEnv?: string;
  runAs?: string;
}

export const STATUS_FILE_NAME = 'service-status.json';

export function buildWorkerLaunch(input: LaunchInput): WorkerLaunch {
  const { layout } = input;
  const dataDir = layout.dataDirFor(input.node);
  const p = layout.platform === 'win32' ? path.win32 : path.posix;
  const args = [
    ...(input.cliScript ? [input.cliScript] : []),
    'worker',
    '--join',
    input.coordinator,
    ...(input.certSha256 ? ['--cert-sha256', input.certSha256] : []),
    '--name',
    input.node,
    '--data-dir',
    dataDir,
  ];
  const env: Record<string, string> = { [STATUS_FILE_ENV]: p.join(dataDir, STATUS_FILE_NAME) };
  if (input.python) env.GPU_SHARE_PYTHON = input.python;
  if (input.pathEnv) env.PATH = input.pathEnv;
  if (input.electron) env.ELECTRON_RUN_AS_NODE = '1';
  return {
    executable: input.execPath,
    args,
    env,
    workingDir: dataDir,
    tokenFile: layout.tokenFile,
    logFile: layout.logFile,
    description: `GPU Share worker ${input.node} (joins ${input.coordinator})`,
    ...(input.runAs !== undefined ? { runAs: input.runAs } : {}),
  };
}

/** The launch as one POSIX shell line (token file sourced), for "start it by hand" messages. */
export function shellLine(launch: WorkerLaunch): string {
  const q = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const env = Object.entries(launch.env).map(([k, v]) => `${k}=${q(v)}`);
  return `(set -a; . ${q(launch.tokenFile)}; cd ${q(launch.workingDir)} && ${[...env, q(launch.executable), ...launch.args.map(q)].join(' ')})`;
}
