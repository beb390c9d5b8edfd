/**
 * The real app, `gpu-share serve` from dist/, on a namespace host, the way a person runs it on the machine
 * that coordinates: its own worker runs inside it, other machines join with the line it prints. The test
 * reads that line (join-line.ts), the operator token from the data folder, and talks to the API through a
 * relay inside the host (api-client.ts). `npm run build` must have run (canRunApp() checks).
 */
import type { AwaitingMachine } from '../../../src-shared/nodes/awaiting-machine';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { TORCH_PYTHON } from '../../integration/helpers/agent-handle';
import { waitFor } from '../../integration/helpers/wait';
import type { CoordinatorEvent, RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import type { RunSpecInput } from '../../../src-shared/worker-protocol';
import { ApiClient } from './api-client';
import { appBuild } from './app-snapshot';
import type { Host } from './hosts';
import type { HostProcess } from './host-process';
import { JOIN_LINE, parseJoinCommand, type JoinInfo } from './join-line';
import { assetsDir, repoRoot } from './paths';
import { startProxy, type ProxyOnHost } from './proxy-process';

export const COORDINATOR_PORT = 7421;
export const PAGE_PORT = 7420;

export interface CoordinatorState {
  workers: WorkerSnapshot[];
  runs: RunSnapshot[];
  events: CoordinatorEvent[];
  /** Machines awaiting approval (GET /v1/state). */
  awaiting?: AwaitingMachine[];
}

export interface AppOptions {
  /** --coordinator-host; default 0.0.0.0 (accept other machines). */
  coordinatorHost?: string;
  /** false passes --no-local-worker. */
  localWorker?: boolean;
  startTimeoutMs?: number;
  /** Written as the app's cluster.yaml before it starts. */
  clusterYaml?: string;
  /** --auto-approve: every machine that joins trains at once (for cases that are not about approval). */
  autoApprove?: boolean;
  /** More `serve` options (e.g. --cluster-name NAME). */
  extraArgs?: string[];
  /** serve's --port on the host's loopback (default PAGE_PORT); page-relay.ts needs its own. */
  pagePort?: number;
  /** More environment for serve (e.g. HOME with a throwaway ~/.ssh for the SSH client). */
  env?: NodeJS.ProcessEnv;
}

/**
 * What every process of GPU Share on a host gets: no test runner variables, the Python that has torch, and
 * the assets and page of the repository (the CLI runs from a copy of dist/, see app-snapshot.ts).
 */
export async function productEnv(extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const build = await appBuild();
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: 'C.UTF-8',
    GPU_SHARE_PYTHON: TORCH_PYTHON,
    GPU_SHARE_ASSETS: assetsDir,
    GPU_SHARE_STATIC_DIR: build.staticDir,
    ...extra,
  };
}

/** What crashAndRestart() did: the new App and when `serve` went down and came back. */
export interface Restarted {
  app: App;
  /** performance.now() at the SIGKILL. */
  killedAt: number;
  /** Date.now() at the SIGKILL. */
  killedWall: number;
  /** performance.now() when the new `serve` printed its join line. */
  readyAt: number;
}

export class App {
  private constructor(
    readonly host: Host,
    readonly proc: HostProcess,
    readonly dataDir: string,
    readonly join: JoinInfo,
    readonly api: ApiClient,
    private readonly relay: ProxyOnHost,
    /** How this `serve` was started, for crashAndRestart(). */
    private readonly launch: { argv: string[]; env: NodeJS.ProcessEnv; startTimeoutMs: number },
  ) {}

  static async start(host: Host, opts: AppOptions = {}): Promise<App> {
    const dataDir = mkdtempSync(path.join(tmpdir(), `gsmh-app-${host.name}-`));
    if (opts.clusterYaml !== undefined) writeFileSync(path.join(dataDir, 'cluster.yaml'), opts.clusterYaml);
    const argv = [
      process.execPath, (await appBuild()).cli, 'serve',
      '--coordinator-host', opts.coordinatorHost ?? '0.0.0.0',
      '--coordinator-port', String(COORDINATOR_PORT),
      '--port', String(opts.pagePort ?? PAGE_PORT),
      '--data-dir', dataDir,
      '--cluster', path.join(dataDir, 'cluster.yaml'),
      ...(opts.localWorker === false ? ['--no-local-worker'] : []),
      ...(opts.autoApprove ? ['--auto-approve'] : []),
      ...(opts.extraArgs ?? []),
    ];
    const env = await productEnv(opts.env);
    const proc = host.spawn(argv, { env, cwd: repoRoot, label: `${host.name}:serve` });
    let relay: ProxyOnHost | null = null;
    try {
      const line = await proc.waitForLine(JOIN_LINE, opts.startTimeoutMs ?? 60_000);
      const join = parseJoinCommand(line[0]);
      const { operatorToken } = JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')) as { operatorToken: string };
      const socketPath = path.join(dataDir, 'api.sock');
      // The relay forwards to the address workers join: reachable inside the host whatever the app binds.
      relay = await startProxy(host, `unix:${socketPath}`, join.url.host, undefined, `${host.name}:api-relay`);
      const api = new ApiClient({ socketPath, tls: join.url.protocol === 'https:', certSha256: join.certSha256, token: operatorToken });
      console.info(`multihost: app on ${host.hostname} (${host.address}), workers join ${join.url.origin}${join.certSha256 ? ' with the cert pinned' : ''}`);
      return new App(host, proc, dataDir, join, api, relay, { argv, env, startTimeoutMs: opts.startTimeoutMs ?? 60_000 });
    } catch (error) {
      // A start that failed halfway leaves neither processes nor the data folder behind.
      await proc.stop(5_000);
      await relay?.proc.stop(2_000);
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * The coordinator crashes and comes back, as after a power cut or an update: SIGKILL (no shutdown of any
   * kind), `downMs` with nothing listening, then `serve` again with the same arguments — same data folder,
   * same ports, same join line. The relay stays (it connects anew for every request). Returns the new App
   * (this one's process is dead) and when `serve` was killed and printed its join line again, both on
   * performance.now()'s clock (the one HostProcess stamps lines with) and the wall clock (events' `at`).
   */
  async crashAndRestart(downMs: number): Promise<Restarted> {
    const killedAt = performance.now();
    const killedWall = Date.now();
    this.proc.kill('SIGKILL');
    await this.proc.exited;
    await new Promise((r) => setTimeout(r, Math.max(0, downMs - (performance.now() - killedAt))));
    const proc = this.host.spawn(this.launch.argv, { env: this.launch.env, cwd: repoRoot, label: `${this.host.name}:serve` });
    try {
      const line = await proc.waitForLine(JOIN_LINE, this.launch.startTimeoutMs);
      const readyAt = performance.now();
      const app = new App(this.host, proc, this.dataDir, parseJoinCommand(line[0]), this.api, this.relay, this.launch);
      return { app, killedAt, killedWall, readyAt };
    } catch (error) {
      await proc.stop(5_000);
      throw error;
    }
  }

  state(): Promise<CoordinatorState> {
    return this.api.request<CoordinatorState>('GET', '/v1/state');
  }

  startRun(spec: RunSpecInput): Promise<RunSnapshot> {
    return this.api.request<RunSnapshot>('POST', '/v1/runs', spec);
  }

  stopRun(runId: string): Promise<RunSnapshot> {
    return this.api.request<RunSnapshot>('POST', `/v1/runs/${encodeURIComponent(runId)}/stop`);
  }

  /**
   * Polls /v1/state until `check` returns something truthy (or throws: the wait fails at once with that
   * error, e.g. when the run ended the wrong way). Polling is the only way to watch a coordinator in another
   * namespace; the timeout message carries what was last seen.
   */
  async waitForState<T>(what: string, check: (s: CoordinatorState) => T | null | undefined | false, timeoutMs: number, pollMs = 500): Promise<T> {
    let last: CoordinatorState | null = null;
    let fetchError = '';
    let outcome: { value: T } | { error: unknown } | null = null;
    let polling = false;
    const poll = async () => {
      if (polling || outcome) return;
      polling = true;
      try {
        last = await this.state();
      } catch (error) {
        fetchError = (error as Error).message;
        return;
      } finally {
        polling = false;
      }
      try {
        const v = check(last);
        if (v) outcome = { value: v };
      } catch (error) {
        outcome = { error };
      }
    };
    const timer = setInterval(() => void poll(), pollMs);
    try {
      await poll();
      const done = await waitFor(what, () => outcome, { timeoutMs, recheckMs: 100, describe: () => `\n${describeState(last, fetchError)}\n${this.proc.tail(10)}` });
      if ('error' in done) throw done.error;
      return done.value;
    } finally {
      clearInterval(timer);
    }
  }

  /** Stops the app (SIGTERM: it stops its worker and training) and the relay; removes the data folder. */
  async close(graceMs = 15_000): Promise<void> {
    await this.proc.stop(graceMs);
    await this.relay.proc.stop(2_000);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** A short account of the coordinator's state for failure messages. */
export function describeState(s: CoordinatorState | null, error = ''): string {
  if (!s) return `no state yet${error ? ` (${error})` : ''}`;
  const workers = s.workers.map((w) => `${w.node}#${w.id}.${w.incarnation} ${w.state}${w.stateCause ? ` (${w.stateCause})` : ''} step ${w.step ?? '-'}`);
  const run = s.runs.at(-1);
  const runText = run ? `run ${run.state} (${run.stateCause}) generation ${run.generation} members [${run.workerIds.join(',')}] step ${run.progress?.step ?? '-'} rdzv ${run.rdzvEndpoint ?? '-'}` : 'no run';
  const events = s.events.slice(-8).map((e) => `[${e.kind}] ${e.message}`);
  return `workers: ${workers.join('; ')}\n${runText}\nlast events:\n  ${events.join('\n  ')}${error ? `\nlast poll error: ${error}` : ''}`;
}
