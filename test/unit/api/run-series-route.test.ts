// GET /v1/runs/{id}/series: the coordinator keeps a run's samples/s and each member's resources from the
// heartbeats (run-series-book.ts), so a page reloaded mid-run draws them again; non-members are not kept.
import { afterEach, describe, expect, it } from 'vitest';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { MAX_SERIES_RUNS, RunSeriesBook } from '../../../src-main/core/coordinator/runs/run-series-book';
import { workerApi } from '../../../src-shared/worker-api';
import type { RunSnapshot } from '../../../src-shared/training';
import { Harness, type SimWorker } from '../coordinator/harness';

const OPERATOR = 'operator-token';
let api: CoordinatorHttp | null = null;

afterEach(async () => {
  await api?.close();
  api = null;
});

const resources = (cpuPct: number) => ({ cpuPct, ramUsedMb: 1000, ramTotalMb: 4000, gpus: [{ index: 0, utilPct: 80, memUsedMb: 500, memTotalMb: 1000 }] });

/** `seconds` heartbeats a second from each worker, training and saying how busy its machine is. */
function train(h: Harness, workers: SimWorker[], seconds: number): void {
  for (let t = 0; t < seconds; t++) {
    h.clock.advance(1000);
    for (const [i, w] of workers.entries()) {
      if (w.running) w.setStep(t, 1 / (t + 1), 50);
      h.svc.heartbeat(w.workerId, { incarnation: w.incarnation, progress: w.progress, resources: resources(10 * (i + 1)) });
    }
    h.svc.tick();
  }
}

describe('GET /v1/runs/{id}/series', () => {
  it("answers the run's samples/s and its members' resources over time; 404 for an unknown run", async () => {
    const h = new Harness();
    const [a, b, idle] = h.activeWorkers('alpha', 'beta', 'gamma');
    const run = h.svc.startRun(h.spec({ maxWorkers: 2 }));
    h.run(1000);
    const members = h.liveRun().workerIds;
    expect(members).toHaveLength(2);
    const inRun = [a!, b!, idle!].filter((w) => members.includes(w.workerId));
    const outside = [a!, b!, idle!].find((w) => !members.includes(w.workerId));
    train(h, [a!, b!, idle!], 6);

    api = await startCoordinatorHttp(h.svc, { host: '127.0.0.1', port: 0, joinToken: 'join-token', operatorToken: OPERATOR });
    const res = await fetch(`${api.url}/v1/runs/${encodeURIComponent(run.id)}/series`, { headers: { authorization: `Bearer ${OPERATOR}` } });
    expect(res.status).toBe(200);
    const series = workerApi.runSeries.reply.parse(await res.json());
    expect(series.runId).toBe(run.id);
    expect(series.throughput!.at.length).toBeGreaterThanOrEqual(4);
    expect(series.throughput!.total.at(-1)).toBe(100); // 50 samples/s from each member
    expect(Object.keys(series.resources).map(Number).sort()).toEqual(inRun.map((w) => w.workerId).sort());
    expect(series.resources[outside!.workerId]).toBeUndefined();
    const first = series.resources[inRun[0]!.workerId]!;
    expect(first.samples.length).toBeGreaterThanOrEqual(4);
    expect(first.samples.at(-1)).toMatchObject({ ramUsedMb: 1000, gpus: [{ index: 0, utilPct: 80 }] });

    const missing = await fetch(`${api.url}/v1/runs/run-nope/series`, { headers: { authorization: `Bearer ${OPERATOR}` } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toContain('no run "run-nope"');
    const anonymous = await fetch(`${api.url}/v1/runs/${encodeURIComponent(run.id)}/series`);
    expect(anonymous.status).toBe(401);
  });

  it('keeps an ended run\'s series, forgets a deleted one and at most MAX_SERIES_RUNS runs', () => {
    const book = new RunSeriesBook();
    const snap = (id: string, at: number, endedAt: number | null = null) =>
      ({ id, startedAt: 0, endedAt, workerIds: [1], progress: { step: at, totalSteps: null, loss: 1, samplesPerSec: 5, resumedFrom: null, at }, workerRows: [] }) as unknown as RunSnapshot;
    const worker = (at: number) => ({ id: 1, node: 'alpha', resources: { ...resources(50), at } }) as never;
    book.take({ type: 'run', run: snap('r1', 1) });
    book.take({ type: 'workers', workers: [worker(1)] });
    book.take({ type: 'run', run: snap('r1', 2, 3) });
    book.take({ type: 'workers', workers: [worker(4)] }); // after the run ended: not its member any more
    expect(book.series('r1').throughput!.at).toEqual([1, 2]);
    expect(book.series('r1').resources[1]!.samples.map((s) => s.at)).toEqual([1]);
    book.take({ type: 'runDeleted', runId: 'r1' });
    expect(book.series('r1')).toEqual({ runId: 'r1', throughput: null, resources: {} });
    for (let i = 0; i < MAX_SERIES_RUNS + 5; i++) book.take({ type: 'run', run: snap(`run-${i}`, 1) });
    expect(book.series('run-0').throughput).toBeNull();
    expect(book.series(`run-${MAX_SERIES_RUNS + 4}`).throughput!.at).toEqual([1]);
  });
});
