// `gpu-share runs list` and `workers list` against a coordinator with two live runs, a job and a machine awaiting
// approval: both runs listed with their own members, each worker says what it is doing (text and --json), and a
// coordinator without the job queue (404 on /v1/jobs) still lists its workers. Served by a real HTTP server on
// 127.0.0.1.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJobsPageQuery } from '../../../src-shared/jobs/jobs-page';
import type { JobsState } from '../../../src-shared/jobs/types';
import { awaitingOf, jobOf, runOf, worker } from '../nodes/activity-fixtures';
import { cli } from './helpers';

const OPERATOR = 'operator-token-operator-token-operator-to';
const WORKERS = [worker({ id: 1, node: 'alpha' }), worker({ id: 2, node: 'beta' }), worker({ id: 3, node: 'gamma' }), worker({ id: 4, node: 'delta' }), worker({ id: 5, node: 'eps' })];
const RUNS = [
  runOf({ id: 'run-1-big', spec: { ...runOf().spec, name: 'big' }, workerIds: [1, 2], memberHoldings: [{ workerId: 1, node: 'alpha', gpuIndices: [0] }, { workerId: 2, node: 'beta', gpuIndices: [0] }], progress: { step: 40, totalSteps: 400, loss: 0.5, samplesPerSec: 10, resumedFrom: null, at: 0 } }),
  runOf({ id: 'run-2-small', spec: { ...runOf().spec, name: 'small' }, startedAt: runOf().startedAt + 1000, workerIds: [3, 4], memberHoldings: [{ workerId: 3, node: 'gamma', gpuIndices: [0] }, { workerId: 4, node: 'delta', gpuIndices: [0] }], restartsUsed: 1 }),
  runOf({ id: 'run-0-old', spec: { ...runOf().spec, name: 'old' }, state: 'finished', startedAt: 1, endedAt: 2, workerIds: [1], workerRows: [{ workerId: 1, node: 'alpha', member: true, step: 9, loss: null, samplesPerSec: null, restartsCaused: 0 }] }),
];
const JOB = jobOf({ name: 'r16-lr3e-3', workerId: 5, node: 'eps', gpuIndex: 0 });
let withJobs = true;
const stops: string[] = [];
let server: http.Server;
let root: string;
let env: NodeJS.ProcessEnv;

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const send = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (url.pathname === '/v1/state') return send(200, { workers: WORKERS, runs: RUNS, events: [], awaiting: [awaitingOf({ node: 'zeta' })] });
  if (url.pathname === '/v1/runs') return send(200, { runs: RUNS });
  const one = RUNS.find((r) => url.pathname === `/v1/runs/${r.id}`);
  if (one) return send(200, one);
  if (url.pathname.endsWith('/stop')) stops.push(url.pathname);
  if (url.pathname === '/v1/jobs' && withJobs) {
    const read = readJobsPageQuery(url.searchParams);
    if (!read.ok) return send(400, { error: read.message });
    const jobs = [JOB].filter((j) => !read.query.status || j.status === read.query.status);
    const state: JobsState = {
      jobs, ledger: [], previews: [], placement: 'binpack', manifestName: null, page: { ...read.query, matching: jobs.length },
      counts: { total: 1, pending: 0, claimed: 0, running: 1, completed: 0, failed: 0, cancelled: 0 },
    };
    return send(200, state);
  }
  send(404, { error: `no endpoint ${url.pathname}` });
}

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'gpu-share-lists-'));
  server = http.createServer(route);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  env = { GPU_SHARE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, GPU_SHARE_OPERATOR_TOKEN: OPERATOR, GPU_SHARE_HOME: root };
});

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  rmSync(root, { recursive: true, force: true });
});

describe('gpu-share runs list with two live runs', () => {
  it('lists both live runs with their own members, step and restarts, then the history', async () => {
    const r = await cli(['runs', 'list'], env);
    expect(r).toMatchObject({ code: 0, err: '' });
    const rows = r.out.split('\n').slice(1, 4).map((l) => l.split(/\s{2,}/));
    expect(rows.map((c) => c.slice(0, 6))).toEqual([
      ['run-2-small', 'small', 'running', 'gamma, delta', '-', '1/3'],
      ['run-1-big', 'big', 'running', 'alpha, beta', '41/400', '0/3'],
      ['run-0-old', 'old', 'finished', 'alpha', '-', '0/3'],
    ]);
  });

  it('--json keeps {"runs": [RunSnapshot, …]} with each run member holdings', async () => {
    const r = await cli(['runs', 'list', '--json'], env);
    expect(JSON.parse(r.out)).toEqual({ runs: RUNS });
  });
});

describe('gpu-share runs show and stop without an id, with two live runs', () => {
  it('show takes the newest live run; stop names both and stops neither (exit 2)', async () => {
    const show = await cli(['runs', 'show'], env);
    expect(show.out).toMatch(/^Run run-2-small: small\n/);
    expect(show.out).toContain('  members    gamma (GPU 0), delta (GPU 0)\n');
    const stop = await cli(['runs', 'stop'], env);
    expect(stop.code).toBe(2);
    expect(stop.err).toContain('2 runs are live (small: run-2-small, big: run-1-big); say which to stop, as in: gpu-share runs stop run-2-small');
    expect(stops).toEqual([]);
  });
});

describe('gpu-share workers list says what each machine is doing', () => {
  it('text: a DOING column with run membership and GPU, the job with its step, and the machine awaiting approval below', async () => {
    withJobs = true;
    const r = await cli(['workers', 'list'], env);
    expect(r).toMatchObject({ code: 0, err: '' });
    const doing = r.out.split('\n').slice(1, 6).map((l) => l.split(/\s{2,}/)[3]);
    expect(doing).toEqual(['member of run "big" on GPU 0', 'member of run "big" on GPU 0', 'member of run "small" on GPU 0', 'member of run "small" on GPU 0', 'job "r16-lr3e-3" on GPU 0 (step 31 of 60)']);
    expect(r.out).toMatch(/Awaiting approval[^\n]*\n[^\n]*\nzeta +awaiting approval/);
  });

  it('--json adds the structured activity of every worker and of the machine awaiting approval', async () => {
    const r = await cli(['workers', 'list', '--json'], env);
    const body = JSON.parse(r.out) as { workers: unknown[]; awaiting: unknown[]; activity: { workerId: number | null; node: string; state: string; runs: unknown[]; jobs: unknown[]; text: string }[] };
    expect(body.workers).toHaveLength(5);
    expect(body.awaiting).toHaveLength(1);
    expect(body.activity[0]).toEqual({ workerId: 1, node: 'alpha', state: 'busy', runs: [{ runId: 'run-1-big', runName: 'big', runState: 'running', gpuIndices: [0] }], jobs: [], text: 'member of run "big" on GPU 0' });
    expect(body.activity[4]).toMatchObject({ workerId: 5, state: 'busy', jobs: [{ jobId: JOB.id, jobName: 'r16-lr3e-3', status: 'running', gpuIndex: 0, step: 30, totalSteps: 60 }] });
    expect(body.activity[5]).toMatchObject({ workerId: null, node: 'zeta', state: 'awaiting-approval', text: 'awaiting approval' });
  });

  it('a coordinator without the job queue still lists its workers (runs only)', async () => {
    withJobs = false;
    const r = await cli(['workers', 'list'], env);
    withJobs = true;
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(/^5 +eps +active +idle /m);
  });
});
