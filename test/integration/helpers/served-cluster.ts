/**
 * `gpu-share serve` (the built CLI) and named `gpu-share worker` agents as OS processes on 127.0.0.1, on fixed
 * ports and one data folder, so a test can stop or SIGKILL serve and start it again where it was (restartServe).
 * Every process started is tracked, and closeServedCluster() leaves none behind. For tests of what survives a
 * serve restart (crash-restart, coordinator-failover, series-restart).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll } from 'vitest';
import { releaseBuild } from '../../multihost/helpers/app-snapshot';
import { bundleAgent, findRepoRoot } from './agent-bundle';
import { AgentHandle } from './agent-handle';
import { OperatorApi } from './operator-api';
import { PidTracker } from './pid-tracker';
import { freePort, operatorToken, ServeProcess } from './serve-process';

export interface ServedCluster {
  work: string;
  dataDir: string;
  ports: { page: number; coordinator: number };
  serve: ServeProcess;
  api: OperatorApi;
  agents: AgentHandle[];
  tracker: PidTracker;
}

/** Serve started on the cluster's folder and ports (the first time, or again after a stop or a kill). */
export async function restartServe(c: Pick<ServedCluster, 'dataDir' | 'ports' | 'tracker'>): Promise<ServeProcess> {
  const serve = await ServeProcess.start({ dataDir: c.dataDir, port: c.ports.page, coordinatorPort: c.ports.coordinator });
  c.tracker.addRoot(serve.pid);
  return serve;
}

/** Polls `check` (async) until it gives a value; the timeout names what was awaited and the last error. */
export async function poll<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let error = '';
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (e) {
      error = (e as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${error ? ` (last error: ${error})` : ''}`);
    await sleep(200);
  }
}

/**
 * Reads an ended run's record once two reads 2.5 s apart agree: a member's resource sample taken just before the
 * end can reach the coordinator a heartbeat or two after the run's ended snapshot (RunSeriesBook keeps it).
 */
export async function readSettled<T>(read: () => Promise<T>): Promise<T> {
  let last = await read();
  for (;;) {
    await sleep(2500);
    const again = await read();
    if (JSON.stringify(again) === JSON.stringify(last)) return again;
    last = again;
  }
}

/** Serve and one agent per name in a new folder under the system's temp folder; resolves once every agent is active. */
export async function startServedCluster(opts: { prefix: string; agentEntry: string; agents: string[]; keepOutput?: boolean }): Promise<ServedCluster> {
  const work = mkdtempSync(path.join(tmpdir(), opts.prefix));
  const dataDir = path.join(work, 'app');
  mkdirSync(dataDir);
  const ports = { page: await freePort(), coordinator: await freePort() };
  const tracker = new PidTracker();
  const serve = await restartServe({ dataDir, ports, tracker });
  const api = new OperatorApi(serve.join.url.origin, operatorToken(dataDir));
  const c: ServedCluster = { work, dataDir, ports, serve, api, agents: [], tracker };
  for (const name of opts.agents) {
    const agent = new AgentHandle({ entry: opts.agentEntry, coordinatorUrl: serve.join.url.origin, token: serve.join.token, name, dataDir: path.join(work, name), keepOutput: opts.keepOutput ?? false });
    tracker.addRoot(agent.pid);
    c.agents.push(agent);
  }
  await Promise.all(c.agents.map((a) => a.ready()));
  await poll(`${opts.agents.length} workers active`, async () => (await api.state()).workers.filter((w) => w.state === 'active').length === opts.agents.length, 30_000);
  return c;
}

/** Agents asked to stop (SIGTERM, 20 s), serve stopped, anything left killed, the folder removed. */
export async function closeServedCluster(c: ServedCluster): Promise<void> {
  for (const a of c.agents) a.signal('SIGTERM');
  await Promise.race([Promise.all(c.agents.map((a) => a.exited)), sleep(20_000)]);
  await c.serve.stop();
  c.tracker.scan();
  c.tracker.killAll();
  c.tracker.stop();
  rmSync(c.work, { recursive: true, force: true });
}

/**
 * Call at a test file's top level: beforeAll bundles the agent and starts the cluster (not when `skip`, e.g. no
 * torch), afterAll closes it and releases the build. The getter gives the cluster, or throws when it did not start.
 */
export function useServedCluster(opts: { prefix: string; agents: string[]; keepOutput?: boolean; skip?: boolean }): () => ServedCluster {
  let cluster: ServedCluster | null = null;
  let agentEntry = '';
  beforeAll(async () => {
    if (opts.skip) return;
    agentEntry = await bundleAgent(findRepoRoot());
    cluster = await startServedCluster({ ...opts, agentEntry });
  }, 180_000);
  afterAll(async () => {
    const c = cluster;
    cluster = null;
    if (c) await closeServedCluster(c);
    if (agentEntry) rmSync(agentEntry, { force: true });
    releaseBuild();
  });
  return () => {
    if (!cluster) throw new Error('the cluster did not start (see beforeAll)');
    return cluster;
  };
}
