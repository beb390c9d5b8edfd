// A 10,000-job manifest (the documented maximum) against a real coordinator HTTP server, a real state.db and the
// job service, with 100 failed workers kept beside one live one: the event loop keeps turning while it is taken
// (a 10 ms timer stands for the heartbeats), and GET /v1/jobs answers one bounded page with the whole queue's
// counts. Before paging, the same manifest held the loop for seconds and GET /v1/jobs answered ~80 MB.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobsState, ManifestSubmitResult } from '../../../src-shared/jobs/types';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { JobService } from '../../../src-main/core/jobs/job-service';
import { openStateDb, type StateDb } from '../../../src-main/core/state/index';
import { systemClock } from '../../../src-main/platform/ports';
import { workerSnapshot } from '../helpers/snapshots';

const JOBS = 10_000;
const OPERATOR = 'o'.repeat(43);
const JOIN = 'j'.repeat(43);

/** Compact jobs (the API takes at most 1 MiB of body): GPU jobs that the one live CPU-only node cannot take. */
export function bigManifest(jobs = JOBS): string {
  return Array.from({ length: jobs }, (_, i) => `[[jobs]]\nname="j${i}"\ncommand=["t","${i}"]\nrequire_cuda=true\n`).join('');
}

const workers: WorkerSnapshot[] = [
  workerSnapshot(1000, { node: 'live', cpuCores: 8, ramMb: 16384 }),
  ...Array.from({ length: 100 }, (_, i) => workerSnapshot(i, { node: `gone-machine-with-a-long-name-${i}`, state: 'failed', stateCause: 'no heartbeat for 19.8 s' })),
];
const coordinator = { workers: () => workers, runs: () => [], queueInstruction: () => true, setJobHooks: () => undefined };

let dir: string;
let db: StateDb;
let service: JobService;
let http: CoordinatorHttp;

const get = async (query = '') => {
  const res = await fetch(`${http.url}/v1/jobs${query}`, { headers: { authorization: `Bearer ${OPERATOR}` } });
  const text = await res.text();
  return { status: res.status, bytes: Buffer.byteLength(text), body: JSON.parse(text) as JobsState & { error?: string } };
};

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-10k-'));
  db = openStateDb(dir, { onWarning: () => undefined });
  service = new JobService({ clock: systemClock, db, artifacts: new ArtifactStore(path.join(dir, 'artifacts')), cluster: () => ({ nodes: [] }), coordinator, notify: () => undefined });
  const svc = new CoordinatorService({ clock: systemClock, joinToken: JOIN, operatorToken: OPERATOR });
  http = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR, jobs: service });
  service.start();
});

afterAll(async () => {
  service?.stop();
  await http?.close();
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a 10,000-job manifest', () => {
  it('is taken over HTTP while a 10 ms timer keeps firing (longest lag well under the seconds it once took)', async () => {
    let longestLag = 0;
    let longestCpu = 0;
    let beats = 0;
    let last = performance.now();
    let lastCpu = process.cpuUsage();
    const timer = setInterval(() => {
      const now = performance.now();
      const cpu = process.cpuUsage(lastCpu);
      longestLag = Math.max(longestLag, now - last - 10);
      longestCpu = Math.max(longestCpu, (cpu.user + cpu.system) / 1000);
      last = now;
      lastCpu = process.cpuUsage();
      beats += 1;
    }, 10);
    const started = performance.now();
    const res = await fetch(`${http.url}/v1/jobs/manifest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
      body: JSON.stringify({ fileName: 'sweep.toml', text: bigManifest() }),
    });
    const result = (await res.json()) as ManifestSubmitResult;
    // And the first placement rounds after it.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    clearInterval(timer);
    const elapsed = performance.now() - started;

    expect(res.status).toBe(200);
    expect(result.ok && result.added.length).toBe(JOBS);
    // The 100 ms target is the bench's (bench/abuse-manifest-block.ts). A shared CI machine gets room: the wall
    // clock counts time this process waited for a core, so the CPU it spent between two beats is checked too.
    // Taking the manifest in one piece blocked about 3.4 s on the machine these were tuned on.
    expect(longestCpu).toBeLessThan(500);
    expect(longestLag).toBeLessThan(1000);
    expect(beats).toBeGreaterThan(elapsed / 10 / 4);
  }, 60_000);

  it('GET /v1/jobs answers one page (200 by default) with counts of the whole queue, in well under 2 MB', async () => {
    const { status, bytes, body } = await get();
    expect(status, body.error).toBe(200);
    expect(body.jobs).toHaveLength(200);
    expect(body.counts).toMatchObject({ total: JOBS, pending: JOBS });
    expect(body.page).toEqual({ offset: 0, limit: 200, status: null, matching: JOBS });
    expect(bytes).toBeLessThan(2 * 1024 * 1024);
    // Only the live node gets a verdict: the 100 failed workers are not listed in any preview or reason.
    expect(body.previews.length).toBeGreaterThan(0);
    for (const preview of body.previews) expect(preview.verdicts.map((v) => v.node)).toEqual(['live']);
    expect(body.jobs[0]!.reason).toBe("no node can ever run it as the cluster is: live: needs CUDA, has no NVIDIA GPU — change the job's requirements or add a node that meets them");
    expect(JSON.stringify([body.jobs, body.previews])).not.toContain('gone-machine');
  });

  it('pages with ?offset=&limit= (at most 1,000), filters with ?status=, and says where jobs beyond the round wait', async () => {
    const last = await get('?offset=9900&limit=1000');
    expect(last.body.jobs).toHaveLength(100);
    expect(last.body.jobs.at(-1)!.name).toBe('j9999');
    expect(last.body.jobs.at(-1)!.reason).toMatch(/^waiting behind 9999 earlier pending jobs/);
    expect(last.body.previews).toEqual([]);

    const big = await get('?limit=1000');
    expect(big.body.jobs).toHaveLength(1000);
    expect(big.bytes).toBeLessThan(2 * 1024 * 1024);

    const pending = await get('?status=pending&limit=3');
    expect(pending.body.jobs.map((j) => j.name)).toEqual(['j0', 'j1', 'j2']);
    expect((await get('?status=completed')).body).toMatchObject({ jobs: [], page: { matching: 0 } });

    for (const bad of ['?limit=1001', '?limit=0', '?offset=-1', '?status=done', '?limit=ten']) {
      const refused = await get(bad);
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error).toMatch(/^GET \/v1\/jobs: (limit|offset|status) /);
    }
  });
});
