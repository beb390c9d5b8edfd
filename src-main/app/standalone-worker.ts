/**
 * The standalone worker, composed: what `gpu-share worker` and the agent process run once the command line is
 * read (cli/run-worker.ts). It wires the worker agent (agent/) to the real pty, an installed service's status
 * file and the process's signals (platform/), and turns join failures into lines that say what to do. The entry
 * points reach agent/ only through app/, so this is where a standalone worker is put together, as app-core.ts
 * puts the app together.
 */
import path from 'node:path';
import { JoinError, WorkerAgent } from '../agent/worker-agent';
import { loadOrCreateNodeIdentity, NodeKeyMovedError } from '../agent/node-identity';
import { proveCoordinator } from '../agent/coordinator-proof';
import { nodePtySpawner } from '../platform/pty/node-pty-spawner';
import type { PtySpawner } from '../platform/ports';
import { defaultUserDataDir } from '../platform/user-data-dir';
import { SymlinkRefusedError } from '../platform/files/refuse-symlink';
import { discoverOne } from '../platform/discovery/pick-coordinator';
import { startStatusReporter } from '../platform/service/worker-status-file';

/** How long a heard coordinator has to answer the join challenge before it is ignored. */
const DISCOVER_PROOF_TIMEOUT_MS = 3_000;

/** What the command line decided: the coordinator, this machine's name and folders, and the agent's options. */
export interface StandaloneWorkerSettings {
  coordinatorUrl: string;
  token: string;
  certSha256?: string | undefined;
  name: string;
  dataDir: string;
  advertiseHost?: string | undefined;
  projectCacheBytes?: number | undefined;
  /** Also print the training output. */
  showOutput: boolean;
  env: NodeJS.ProcessEnv;
  workDir: string;
  /** The file an installed service's worker keeps its state in (gpu-share worker status reads it). */
  statusFile?: string | undefined;
  pty?: PtySpawner | undefined;
  /** Install SIGTERM / SIGINT handlers (true for a real process). */
  handleSignals: boolean;
}

/** Where the worker's lines go: one event a line on `say`, failures on `err`, training output on `output`. */
export interface StandaloneWorkerIo {
  say(line: string): void;
  err(line: string): void;
  output(data: string): void;
}

/** The data folder of a worker named `node` when none is given: <app data>/workers/<name>. */
export function defaultWorkerDataDir(env: NodeJS.ProcessEnv, node: string): string {
  const safe = node.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100) || 'worker';
  return path.join(defaultUserDataDir(env), 'workers', safe);
}

/** This machine's node key, made in `dataDir` if there is none yet: what the coordinator approves. */
export function workerNodeKey(dataDir: string): { publicKey: string; fingerprint: string } {
  const identity = loadOrCreateNodeIdentity(dataDir);
  return { publicKey: identity.publicKey, fingerprint: identity.fingerprint };
}

/** A data-folder problem the person can fix (a linked key file, a copied folder), as one line; null for anything else. */
export function dataFolderProblem(error: unknown): string | null {
  return error instanceof SymlinkRefusedError || error instanceof NodeKeyMovedError ? error.message : null;
}

/** The one coordinator on the LAN that proves it holds `token` (only the join's first step: a nonce and the token's id). */
export function discoverCoordinatorFor(token: string, options: Omit<Parameters<typeof discoverOne>[0], 'prove'>): ReturnType<typeof discoverOne> {
  return discoverOne({ ...options, prove: (c) => proveCoordinator({ url: c.url, certSha256: c.certSha256, token, timeoutMs: DISCOVER_PROOF_TIMEOUT_MS }) });
}

function createAgent(settings: StandaloneWorkerSettings, io: StandaloneWorkerIo): WorkerAgent {
  return new WorkerAgent({
    coordinatorUrl: settings.coordinatorUrl,
    token: settings.token,
    ...(settings.certSha256 ? { certSha256: settings.certSha256 } : {}),
    retryFirstJoin: true,
    name: settings.name,
    dataDir: settings.dataDir,
    pty: settings.pty ?? nodePtySpawner,
    warmLauncher: true,
    ...(settings.advertiseHost ? { advertiseHost: settings.advertiseHost } : {}),
    ...(settings.projectCacheBytes !== undefined ? { projectCacheBytes: Math.round(settings.projectCacheBytes) } : {}),
    log: io.say,
    env: settings.env,
    workDir: settings.workDir,
    ...(settings.showOutput ? { onOutput: io.output } : {}),
  });
}

/** SIGTERM / SIGINT: the first stops training and leaves the cluster, the second kills training at once. */
function handleSignals(agent: WorkerAgent, io: StandaloneWorkerIo): { count(): number; remove(): void } {
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
  let signalled = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signalled += 1;
    if (signalled === 1) {
      io.say(`received ${signal}: stopping training and leaving the cluster (again to kill training at once)`);
      void agent.stop(`the worker received ${signal}`);
    } else {
      io.say(`received ${signal} again: killing training now`);
      agent.abort();
    }
  };
  for (const s of signals) process.on(s, onSignal);
  return { count: () => signalled, remove: () => signals.forEach((s) => process.off(s, onSignal)) };
}

/**
 * Runs the worker until it stops: joins (retrying until the coordinator first answers), says
 * "worker ready: id=… node=…", and waits for the agent to stop or be drained. The exit code: 0 when it
 * stopped or was stopped before it joined, 1 when the coordinator refused the join.
 */
export async function runStandaloneWorker(settings: StandaloneWorkerSettings, io: StandaloneWorkerIo): Promise<number> {
  const agent = createAgent(settings, io);
  // Keep the process alive while the agent works: its timers are unref'd so the app can exit freely.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const signals = settings.handleSignals ? handleSignals(agent, io) : null;
  const reporter = settings.statusFile ? startStatusReporter(settings.statusFile, () => agent.status()) : null;
  let stopDetail = 'the worker exited';
  try {
    let joined;
    try {
      joined = await agent.start();
    } catch (error) {
      if (!(error instanceof JoinError)) throw error;
      if ((signals?.count() ?? 0) > 0) {
        io.say(`worker stopped before it joined: ${error.message}`); // Ctrl-C while waiting (for approval, say) is no failure
        return 0;
      }
      io.err(error.message);
      stopDetail = `could not join: ${error.message}`;
      return 1;
    }
    io.say(`worker ready: id=${joined.workerId} node=${agent.status().node}`);
    const exit = await agent.exited;
    stopDetail = `${exit.reason === 'drained' ? 'drained' : 'stopped'}: ${exit.detail}`;
    io.say(`worker ${stopDetail}`);
    return 0;
  } finally {
    reporter?.stop(stopDetail);
    clearInterval(keepAlive);
    signals?.remove();
  }
}
