/**
 * What `gpu-share worker` and the standalone agent process both do: parse the command line, start a
 * WorkerAgent on the real pty, print a readiness line, stop cleanly on SIGTERM / SIGINT, and turn join
 * failures into messages that say what to do. Human lines go to stdout, one event per line, so scripts
 * and tests can wait on them:
 *   worker ready: id=3 node=jetson
 *   started run run-1-ab12cd generation 0: pid 4242: …
 *   run run-1-ab12cd generation 0 exited with code 0
 */
import os from 'node:os';
import path from 'node:path';
import { flagString, parseArgs, UsageError, type CliIo } from '../cli/command';
import { nodePtySpawner } from '../core/pty/node-pty-spawner';
import type { PtySpawner } from '../core/ports';
import { defaultUserDataDir } from '../core/user-data-dir';
import { parseCoordinatorUrl } from './coordinator-client';
import { JoinError, WorkerAgent } from './worker-agent';

/** The join token may come from the environment instead of the command line, where `ps` would show it. */
export const TOKEN_ENV = 'GPU_SHARE_JOIN_TOKEN';

export const WORKER_USAGE = `Usage: gpu-share worker --join URL --token TOKEN [options]

Joins this machine to a GPU Share coordinator as a worker: reports its GPUs, RAM and cores, heartbeats,
and runs the training it is given (torchrun in a pseudo-terminal). If it loses the coordinator for longer
than the heartbeat timeout it stops its training and keeps trying to join again. Ctrl-C stops training and
leaves the cluster (press it twice to kill training at once).

Options:
  --join URL              the coordinator, e.g. http://192.168.1.20:7421 (http or https)
  --token TOKEN           the cluster's join token (or set ${TOKEN_ENV}); find it in the app's
                          "Add a worker" panel, or in the output of \`gpu-share serve\`
  --name NAME             node name shown in the app (default: this machine's hostname)
  --data-dir DIR          checkpoints and logs (default: <app data>/workers/<name>)
  --advertise-host HOST   address other workers reach this one at (default: the local address of
                          the connection to the coordinator)
  --show-output           also print the training output here

Environment: GPU_SHARE_PYTHON names the Python interpreter that has PyTorch (found automatically
otherwise); GPU_SHARE_NVIDIA_SMI names nvidia-smi.
`;

export interface RunWorkerOptions {
  pty?: PtySpawner;
  /** Install SIGTERM / SIGINT handlers (true for a real process). */
  handleSignals?: boolean;
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100) || 'worker';
}

export async function runWorker(args: string[], io: CliIo, options: RunWorkerOptions = {}): Promise<number> {
  const parsed = parseArgs(args, ['join', 'token', 'name', 'data-dir', 'advertise-host'], ['show-output']);
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  const joinRaw = flagString(parsed, 'join');
  if (!joinRaw) throw new UsageError('--join URL is required (the coordinator to join, e.g. http://192.168.1.20:7421)');
  const url = parseCoordinatorUrl(joinRaw);
  if (!url.ok) throw new UsageError(`--join: ${url.message}`);
  const token = flagString(parsed, 'token') ?? io.env[TOKEN_ENV];
  if (!token) {
    throw new UsageError(`--token TOKEN is required (or set ${TOKEN_ENV}); copy it from the app's "Add a worker" panel or from the output of \`gpu-share serve\``);
  }
  const name = flagString(parsed, 'name');
  if (name !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) {
    throw new UsageError(`--name "${name}" must start with a letter or digit and use only letters, digits, ".", "_" and "-" (at most 128)`);
  }
  const advertiseHost = flagString(parsed, 'advertise-host');
  const dataDirFlag = flagString(parsed, 'data-dir');

  const node = name ?? os.hostname();
  const say = (line: string) => io.out(`${line}\n`);
  const agent = new WorkerAgent({
    coordinatorUrl: url.url.href,
    token,
    name: node,
    dataDir: dataDirFlag ? path.resolve(io.cwd, dataDirFlag) : path.join(defaultUserDataDir(io.env), 'workers', safeName(node)),
    pty: options.pty ?? nodePtySpawner,
    ...(advertiseHost ? { advertiseHost } : {}),
    log: say,
    env: io.env,
    workDir: io.cwd,
    ...(parsed.flags['show-output'] ? { onOutput: (data: string) => io.out(data) } : {}),
  });

  // Keep the process alive while the agent works: its timers are unref'd so the app can exit freely.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
  let signalled = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signalled += 1;
    if (signalled === 1) {
      say(`received ${signal}: stopping training and leaving the cluster (again to kill training at once)`);
      void agent.stop(`the worker received ${signal}`);
    } else {
      say(`received ${signal} again: killing training now`);
      agent.abort();
    }
  };
  if (options.handleSignals) for (const s of signals) process.on(s, onSignal);
  try {
    let joined;
    try {
      joined = await agent.start();
    } catch (error) {
      if (error instanceof JoinError) {
        io.err(`gpu-share worker: ${error.message}\n`);
        return 1;
      }
      throw error;
    }
    say(`worker ready: id=${joined.workerId} node=${agent.status().node}`);
    const exit = await agent.exited;
    say(`worker ${exit.reason === 'drained' ? 'drained' : 'stopped'}: ${exit.detail}`);
    return 0;
  } finally {
    clearInterval(keepAlive);
    if (options.handleSignals) for (const s of signals) process.off(s, onSignal);
  }
}
