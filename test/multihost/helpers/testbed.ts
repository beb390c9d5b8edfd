/**
 * One case's whole world: namespace hosts, the app on the first, workers on the others, and a pid tracker
 * over everything they start, so the teardown can prove that no process outlived the case (training
 * included). Teardown is graceful first (workers leave, the app stops its own worker), then by pid, then the
 * namespaces go, which kills whatever might still hide in them.
 */
import { describeProcesses, PidTracker, type TrackedProcess } from '../../integration/helpers/pid-tracker';
import { waitFor } from '../../integration/helpers/wait';
import type { ShardMap } from '../../../src-shared/training';
import { App, type AppOptions, type CoordinatorState } from './app';
import { releaseBuild } from './app-snapshot';
import { releaseProxyBundle } from './proxy-process';
import { Cluster, type Host } from './hosts';
import { spawnWorker, type WorkerOnHost, type WorkerOptions } from './worker';

export { TRAINER } from './paths';

export interface Testbed {
  cluster: Cluster;
  app: App;
  /** Workers by host name ('b', 'c', …). */
  workers: Map<string, WorkerOnHost>;
  tracker: PidTracker;
}

export interface TestbedOptions {
  /** Host names; the app runs on the first. */
  hosts: string[];
  /** The app's options, or a function of the hosts (e.g. to bind the coordinator to A's address). */
  app?: AppOptions | ((cluster: Cluster) => AppOptions);
  /** Hosts that get a `gpu-share worker` (default: every host but the app's), with their options. */
  workers?: { host: string; opts?: WorkerOptions }[];
}

/** Builds the hosts and starts the app; workers are started by startWorker (a case may first start a proxy). */
export async function startApp(opts: TestbedOptions): Promise<Testbed> {
  const cluster = Cluster.create(opts.hosts);
  const tracker = new PidTracker();
  try {
    const appOpts = typeof opts.app === 'function' ? opts.app(cluster) : opts.app;
    const app = await App.start(cluster.host(opts.hosts[0]!), appOpts);
    tracker.addRoot(app.proc.pid);
    return { cluster, app, workers: new Map(), tracker };
  } catch (error) {
    await cluster.destroy(2_000);
    tracker.stop();
    releaseBuild();
    await releaseProxyBundle();
    throw error;
  }
}

export async function startWorker(tb: Testbed, host: string, opts: WorkerOptions = {}): Promise<WorkerOnHost> {
  const w = await spawnWorker(tb.cluster.host(host), tb.app, opts);
  tb.tracker.addRoot(w.pid);
  tb.workers.set(host, w);
  return w;
}

/** Builds everything and waits until every worker (the app's own included, unless disabled) is active. */
export async function startTestbed(opts: TestbedOptions): Promise<Testbed> {
  const tb = await startApp(opts);
  try {
    const list: { host: string; opts?: WorkerOptions }[] = opts.workers ?? opts.hosts.slice(1).map((host) => ({ host }));
    for (const w of list) await startWorker(tb, w.host, w.opts);
    await Promise.all([...tb.workers.values()].map((w) => w.ready()));
    const appOpts = typeof opts.app === 'function' ? opts.app(tb.cluster) : opts.app;
    await waitForActive(tb, [...tb.workers.values()].map((w) => w.name), appOpts?.localWorker !== false);
    return tb;
  } catch (error) {
    await stopTestbed(tb);
    throw error;
  }
}

/** Waits until the named workers (and the app's own, if `withLocal`) are active. */
export function waitForActive(tb: Testbed, nodes: string[], withLocal: boolean, timeoutMs = 60_000): Promise<CoordinatorState> {
  return tb.app.waitForState(
    `workers ${[...nodes, ...(withLocal ? ['(local)'] : [])].join(', ')} active`,
    (s) => {
      const ok = nodes.every((n) => s.workers.some((w) => w.node === n && w.state === 'active')) && (!withLocal || s.workers.some((w) => w.local && w.state === 'active'));
      return ok ? s : null;
    },
    timeoutMs,
  );
}

/** Tears a testbed down and returns the processes that were still alive after the graceful stop. */
export async function stopTestbed(tb: Testbed): Promise<TrackedProcess[]> {
  tb.tracker.scan();
  await Promise.all([...tb.workers.values()].map((w) => w.close(15_000)));
  await tb.app.close(15_000);
  // Every launcher a worker announced is checked too, even one started between two scans.
  for (const w of tb.workers.values()) for (const s of w.starts()) tb.tracker.addRoot(s.pid);
  await waitFor('every process of the case to end', () => {
    tb.tracker.scan();
    return tb.tracker.alive().length === 0;
  }, { timeoutMs: 10_000 }).catch(() => undefined);
  const left = tb.tracker.alive();
  tb.tracker.killAll();
  tb.tracker.stop();
  await tb.cluster.destroy(2_000);
  releaseBuild();
  await releaseProxyBundle();
  if (left.length > 0) console.warn(`multihost: processes left after the case: ${describeProcesses(left)}`);
  return left;
}

/** A host's worker, or the app's own worker for the app's host. */
export function workerOf(s: CoordinatorState, node: string | 'local') {
  return s.workers.find((w) => (node === 'local' ? w.local : w.node === node));
}

/** Shards of one map are in order, disjoint and cover [0, total); returns a problem, or null when fine. */
export function shardProblem(map: ShardMap): string | null {
  let next = 0;
  for (const s of map.shards) {
    if (s.start !== next) return `generation ${map.generation}: shard of ${s.node} starts at ${s.start}, expected ${next}`;
    if (s.end < s.start) return `generation ${map.generation}: shard of ${s.node} ends before it starts`;
    next = s.end;
  }
  return next === map.totalSamples ? null : `generation ${map.generation}: shards end at ${next}, not ${map.totalSamples}`;
}

export function hostOf(tb: Testbed, name: string): Host {
  return tb.cluster.host(name);
}
