/**
 * The 10,000-job manifest of issue 14 (item 8): submitted over real HTTP on 127.0.0.1 to a coordinator with its
 * job service on a real state.db, while the coordinator remembers 100 failed workers beside its one live one.
 * Before the fix the manifest held the event loop about 40 s (the app's own worker was declared failed: "no
 * heartbeat for 19.8 s") and GET /v1/jobs answered 384 MB. The figures: the longest event-loop block while the
 * manifest is taken and the placement rounds after it (perf_hooks.monitorEventLoopDelay and a 10 ms timer's
 * largest lag), the time until every job is pending, and the size of GET /v1/jobs (default page, and 1,000).
 *
 *   node scripts/run-ts.mjs bench/abuse-manifest-block.ts [--manifest-jobs 10000] [--dead-workers 100]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { startCoordinatorHttp } from '../src-main/core/api/coordinator-http';
import { generateToken } from '../src-main/platform/tokens';
import { CoordinatorService } from '../src-main/core/coordinator/service/coordinator-service';
import { ArtifactStore } from '../src-main/core/jobs/artifact-store';
import { JobService } from '../src-main/core/jobs/job-service';
import { openStateDb } from '../src-main/core/state/index';
import { systemClock } from '../src-main/platform/ports';
import type { JobsState } from '../src-shared/jobs/types';
import type { WorkerSnapshot } from '../src-shared/training';
import { runMain, startedAs } from './lib/abuse-harness';
import { intFlag } from './lib/flags';
import { printTable } from './lib/stats';

export const MANIFEST_BLOCK_HEADER = ['attack', 'coordinator now', 'before the fix', 'took'];

export interface ManifestBlockFigures {
  jobs: number;
  deadWorkers: number;
  /** Longest event-loop block while the manifest was taken and for 2 s after (ms, wall clock). */
  longestBlockMs: number;
  /** CPU time this process spent in that longest stretch between two timer beats (ms): the block without the time spent waiting for a core on a loaded machine. */
  longestBlockCpuMs: number;
  /** From sending the manifest until its answer, when every job is pending (ms). */
  allPendingMs: number;
  /** GET /v1/jobs with no query (the first 200 jobs) and with ?limit=1000, in bytes. */
  defaultPageBytes: number;
  largestPageBytes: number;
  jobsInDefaultPage: number;
}

/** Compact jobs (the API takes at most 1 MiB of body) that the live CPU-only node cannot take, so all stay pending. */
function manifestText(jobs: number): string {
  return Array.from({ length: jobs }, (_, i) => `[[jobs]]\nname="j${i}"\ncommand=["t","${i}"]\nrequire_cuda=true\n`).join('');
}

function worker(id: number, node: string, state: WorkerSnapshot['state']): WorkerSnapshot {
  return { id, node, incarnation: 1, state, stateCause: state === 'failed' ? 'no heartbeat for 19.8 s' : 'joined', gpus: [], backend: 'cpu', joinedAt: 1, lastHeartbeatAt: 1, step: null, loss: null, samplesPerSec: null, address: '127.0.0.1', local: false, cpuCores: 8, ramMb: 16384 };
}

/** Measures one submission; everything it starts is stopped and removed before it returns. */
export async function measureManifestBlock(opts: { jobs: number; deadWorkers: number }): Promise<ManifestBlockFigures> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-manifest-block-'));
  const db = openStateDb(dir, { onWarning: () => undefined });
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const svc = new CoordinatorService({ clock: systemClock, joinToken, operatorToken });
  // The coordinator's own registry with the workers it would keep after 100 machines failed (joining them for
  // real is the join flood's bench; here only what the job service sees of them matters).
  const kept = [worker(100_000, 'live', 'active'), ...Array.from({ length: opts.deadWorkers }, (_, i) => worker(i, `failed-machine-${i}`, 'failed'))];
  const coordinator = { workers: () => [...svc.workers(), ...kept], runs: () => svc.runs(), queueInstruction: () => true, setJobHooks: () => undefined };
  const service = new JobService({ clock: systemClock, db, artifacts: new ArtifactStore(path.join(dir, 'artifacts')), cluster: () => ({ nodes: [] }), coordinator, notify: () => undefined });
  const api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken, operatorToken, jobs: service });
  svc.start();
  service.start();
  const auth = { authorization: `Bearer ${operatorToken}` };
  try {
    const text = manifestText(opts.jobs);
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    let timerLag = 0;
    let lagCpu = 0;
    let last = performance.now();
    let lastCpu = process.cpuUsage();
    const timer = setInterval(() => {
      const now = performance.now();
      const cpu = process.cpuUsage(lastCpu);
      if (now - last - 10 > timerLag) {
        timerLag = now - last - 10;
        lagCpu = (cpu.user + cpu.system) / 1000;
      }
      last = now;
      lastCpu = process.cpuUsage();
    }, 10);
    histogram.enable();
    const t0 = performance.now();
    const res = await fetch(`${api.url}/v1/jobs/manifest`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ fileName: 'sweep.toml', text }) });
    const answer = (await res.json()) as { ok?: boolean; added?: string[]; error?: string };
    const allPendingMs = performance.now() - t0;
    if (!answer.ok || answer.added?.length !== opts.jobs) throw new Error(`the manifest was not taken: ${JSON.stringify(answer).slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    histogram.disable();
    clearInterval(timer);
    const page = async (query: string) => {
      const body = await (await fetch(`${api.url}/v1/jobs${query}`, { headers: auth })).text();
      return { bytes: Buffer.byteLength(body), state: JSON.parse(body) as JobsState };
    };
    const first = await page('');
    const largest = await page('?limit=1000');
    return {
      jobs: opts.jobs,
      deadWorkers: opts.deadWorkers,
      longestBlockMs: Math.max(histogram.max / 1e6 - 10, timerLag),
      longestBlockCpuMs: lagCpu,
      allPendingMs,
      defaultPageBytes: first.bytes,
      largestPageBytes: largest.bytes,
      jobsInDefaultPage: first.state.jobs.length,
    };
  } finally {
    service.stop();
    svc.stop();
    await api.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench's row for bench/abuse-bounds.ts's table. */
export async function manifestBlock(opts: { jobs: number; deadWorkers: number }): Promise<string[][]> {
  const t0 = performance.now();
  const f = await measureManifestBlock(opts);
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
  return [
    [
      `a ${f.jobs.toLocaleString('en')}-job manifest, ${f.deadWorkers} failed workers kept`,
      `longest event-loop block ${f.longestBlockMs.toFixed(0)} ms (${f.longestBlockCpuMs.toFixed(0)} ms of CPU); all pending after ${(f.allPendingMs / 1000).toFixed(1)} s; GET /v1/jobs ${kb(f.defaultPageBytes)} (${f.jobsInDefaultPage} jobs), ?limit=1000 ${kb(f.largestPageBytes)}`,
      'about 40 s block (own worker failed); GET /v1/jobs 384 MB',
      `${((performance.now() - t0) / 1000).toFixed(1)} s`,
    ],
  ];
}

if (startedAs('abuse-manifest-block.ts')) {
  runMain(async () => {
    const rows = await manifestBlock({ jobs: intFlag('manifest-jobs', 10_000, 1, 10_000), deadWorkers: intFlag('dead-workers', 100, 0, 100) });
    printTable(MANIFEST_BLOCK_HEADER, rows);
  });
}
