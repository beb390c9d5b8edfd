// A run's series (samples/s, members' resources) and the trainer's measured comm_s survive a coordinator restart
// on the same state database (issue 17 / 16): written at a bounded cadence, at the run's end and at stop, put back
// at start, and a saved row that is too long is cut to the caps while a damaged one is refused with a line that
// names the run — never a failed start. Real SQLite files.
import { describe, expect, it } from 'vitest';
import { RunSeriesBook, SAVE_POINTS, SERIES_SAVE_MS } from '../../../src-main/core/coordinator/runs/run-series-book';
import { runSnapshot, workerSnapshot } from '../helpers/snapshots';
import { cpuMsOf } from '../helpers/cpu-time';
import { MAX_SERIES_POINTS, type RunSeries, type ThroughputSeries } from '../../../src-shared/runs/run-series';
import type { Harness, SimWorker } from './harness';
import { restartable } from './restartable';

const { dataDir, coordinatorOn } = restartable('gs-series-');

const resources = (cpuPct: number) => ({ cpuPct, ramUsedMb: 1000, ramTotalMb: 4000, gpus: [{ index: 0, utilPct: 80, memUsedMb: 500, memTotalMb: 1000 }] });

/** `seconds` heartbeats a second from each worker, training at step `from + t` and saying how busy its machine is. */
function train(h: Harness, workers: SimWorker[], seconds: number, from = 0): void {
  for (let t = 0; t < seconds; t++) {
    h.clock.advance(1000);
    for (const [i, w] of workers.entries()) {
      if (w.running) w.setStep(from + t, 1 / (from + t + 1), 50 + i);
      h.svc.heartbeat(w.workerId, { incarnation: w.incarnation, progress: w.progress, resources: resources(10 * (i + 1) + t) });
    }
    h.svc.tick();
  }
}

/** A one-worker run on `h` that trains `seconds` and finishes (its worker's trainer exits 0); its id. */
function finishedRun(h: Harness, seconds: number): string {
  const [a] = h.activeWorkers('alpha');
  const run = h.svc.startRun(h.spec());
  h.run(1000);
  train(h, [a!], seconds);
  a!.exit(0);
  h.run(2000);
  expect(h.svc.runs().find((r) => r.id === run.id)!.state).toBe('finished');
  return run.id;
}

/** The first `n` points of a samples/s series (what a save taken when it had `n` held). */
function prefix(t: ThroughputSeries, n: number): ThroughputSeries {
  const workers: ThroughputSeries['workers'] = {};
  for (const [id, w] of Object.entries(t.workers)) workers[Number(id)] = { node: w.node, values: w.values.slice(0, n) };
  return { startedAt: t.startedAt, at: t.at.slice(0, n), total: t.total.slice(0, n), workers };
}

describe('run series across a coordinator restart', () => {
  it('a crash keeps them up to the last save (every 15 s while training); a stop keeps them whole; the run goes on adding to them', () => {
    const dir = dataDir();
    const first = coordinatorOn(dir).h;
    const ws = first.activeWorkers('alpha', 'beta');
    const run = first.svc.startRun(first.spec());
    first.run(1000);
    train(first, ws, SERIES_SAVE_MS / 1000 + 5);
    train(first, ws, 5, 20);
    const live = first.svc.runSeries(run.id);
    expect(live.throughput!.at.length).toBeGreaterThan(20);
    expect(Object.keys(live.resources)).toHaveLength(2);

    // SIGKILL: nothing stopped, nothing flushed. What the last save held comes back, exactly.
    const crashed = coordinatorOn(dir).h.svc.runSeries(run.id);
    const n = crashed.throughput!.at.length;
    expect(n).toBeGreaterThanOrEqual(SERIES_SAVE_MS / 1000 - 2);
    expect(n).toBeLessThan(live.throughput!.at.length);
    expect(crashed.throughput).toEqual(prefix(live.throughput!, n));
    for (const [id, history] of Object.entries(crashed.resources)) {
      expect(history.samples.length).toBeGreaterThan(5);
      expect(history).toEqual({ node: live.resources[Number(id)]!.node, samples: live.resources[Number(id)]!.samples.slice(0, history.samples.length) });
    }

    // A stop (the app closing) writes what changed since: all of it comes back.
    first.svc.stop();
    const { h: second } = coordinatorOn(dir);
    expect(second.svc.runSeries(run.id)).toEqual(live);

    // The restored run relaunches when its workers come back, and its series go on after the saved points.
    second.clock.advance(10 * 60_000);
    const back = second.activeWorkers('alpha', 'beta');
    second.run(3000);
    expect(second.liveRun().state).toBe('running');
    train(second, back, 4, 30);
    const after = second.svc.runSeries(run.id);
    expect(after.throughput!.at.length).toBeGreaterThan(live.throughput!.at.length);
    expect(prefix(after.throughput!, live.throughput!.at.length)).toEqual(live.throughput);
    expect(after.throughput!.at.at(-1)! - live.throughput!.at.at(-1)!).toBeGreaterThan(9 * 60_000);
  });

  it("a run that ends is saved at once: a crash right after the end keeps its whole series", () => {
    const dir = dataDir();
    const first = coordinatorOn(dir).h;
    const runId = finishedRun(first, 4); // well under the 15 s cadence
    const ended = first.svc.runSeries(runId);
    expect(ended.throughput!.at.length).toBeGreaterThanOrEqual(3);
    expect(coordinatorOn(dir).h.svc.runSeries(runId)).toEqual(ended);
  });

  it('a deleted run takes its saved series with it', () => {
    const dir = dataDir();
    const { h: first, db } = coordinatorOn(dir);
    const runId = finishedRun(first, 3);
    expect(db.kv.get(`run-series:${runId}`)).toBeDefined();
    first.svc.deleteRun(runId);
    expect(db.kv.get(`run-series:${runId}`)).toBeUndefined();
  });
});

describe('the save cadence', () => {
  it('a small run is written every 15 s; one whose series hold many points less often, so the bytes written stay bounded', () => {
    /** Seconds between the saves of a run of `members` members, each beating once a second for `seconds`. */
    const gaps = (members: number, seconds: number): number[] => {
      let now = 0;
      const saves: number[] = [];
      const book = new RunSeriesBook({ monotonic: () => now });
      book.attachStore({ saveSeries: () => saves.push(now / 1000) });
      const ids = Array.from({ length: members }, (_, i) => i + 1);
      book.take({ type: 'run', run: runSnapshot({ id: 'run-big', workerIds: ids, endedAt: null }) });
      for (let t = 1; t <= seconds; t++) {
        now = t * 1000;
        book.take({ type: 'workers', workers: ids.map((id) => workerSnapshot(id, { resources: { ...resources(50), at: now } })) });
      }
      return saves.map((at, i) => at - (saves[i - 1] ?? 0));
    };
    expect(gaps(2, 120)).toEqual(Array(8).fill(SERIES_SAVE_MS / 1000));
    const big = gaps(100, 1200); // 100 members: 60,000 samples once each holds 600
    expect(big[0]).toBe(SERIES_SAVE_MS / 1000);
    expect(Math.max(...big)).toBeGreaterThanOrEqual(((SERIES_SAVE_MS / 1000) * 50_000) / SAVE_POINTS);
    expect(big.length).toBeLessThan(1200 / 40);
  }, 30_000);

  it("keeps a member's sample from just before the run's end that comes after its ended snapshot, and writes it at once", () => {
    // Worker snapshots go out at most once a second: the page draws this sample, so the saved series must hold it too.
    const saved: RunSeries[] = [];
    const book = new RunSeriesBook({ monotonic: () => 0 });
    book.attachStore({ saveSeries: (s) => saved.push(structuredClone(s)) });
    book.take({ type: 'run', run: runSnapshot({ workerIds: [1], startedAt: 1_000, endedAt: null }) });
    book.take({ type: 'workers', workers: [workerSnapshot(1, { resources: { ...resources(10), at: 2_000 } })] });
    book.take({ type: 'run', run: runSnapshot({ state: 'finished', workerIds: [], startedAt: 1_000, endedAt: 3_500 }) });
    book.take({ type: 'workers', workers: [workerSnapshot(1, { resources: { ...resources(20), at: 3_000 } })] });
    // After the end: not the run's, and the member is let go.
    book.take({ type: 'workers', workers: [workerSnapshot(1, { resources: { ...resources(30), at: 4_000 } })] });
    book.take({ type: 'workers', workers: [workerSnapshot(1, { resources: { ...resources(40), at: 5_000 } })] });
    expect(book.series('run-1').resources[1]!.samples.map((x) => x.at)).toEqual([2_000, 3_000]);
    expect(saved.at(-1)!.resources[1]!.samples.map((x) => x.at)).toEqual([2_000, 3_000]);
  });
});

/** A saved series of `points` points a second apart, with one member and one resource history of as many samples. */
function savedSeries(runId: string, points: number): RunSeries {
  const at = Array.from({ length: points }, (_, i) => 1_000 + i * 1000);
  return {
    runId,
    throughput: { startedAt: 0, at, total: at.map((_, i) => i), workers: { 3: { node: 'alpha', values: at.map((_, i) => i) } } },
    resources: { 3: { node: 'alpha', samples: at.map((t, i) => ({ at: t, ...resources(i % 100) })) } },
  };
}

describe('saved series put back at start', () => {
  it('a series longer than the caps is cut to them, its first and newest points kept, quickly', () => {
    const book = new RunSeriesBook({ warn: () => undefined });
    const rows = Array.from({ length: 32 }, (_, i) => ({ runId: `run-${i}`, saved: savedSeries(`run-${i}`, 2400) }));
    expect(cpuMsOf(() => book.restore(rows)).ms).toBeLessThan(2000); // 32 runs at the longest a row may be: no quadratic thinning at start
    book.restore([{ runId: 'run-1', saved: savedSeries('run-1', 2000) }]);
    const s = book.series('run-1');
    expect(s.throughput!.at.length).toBeLessThanOrEqual(MAX_SERIES_POINTS);
    expect(s.throughput!.at[0]).toBe(1_000);
    expect(s.throughput!.at.at(-1)).toBe(1_000 + 1999 * 1000);
    expect(s.throughput!.workers[3]!.values).toHaveLength(s.throughput!.at.length);
    expect(s.resources[3]!.samples.length).toBeLessThanOrEqual(MAX_SERIES_POINTS);
  });

  it('a damaged row is refused with a line naming the run and why; the other runs come back and nothing throws', () => {
    const said: string[] = [];
    const book = new RunSeriesBook({ warn: (m) => said.push(m) });
    const good = savedSeries('run-ok', 10);
    const uneven = savedSeries('run-uneven', 10);
    uneven.throughput!.total.pop();
    const huge = savedSeries('run-huge', 5000);
    const backwards = savedSeries('run-back', 10);
    backwards.resources[3]!.samples.reverse();
    book.restore([
      { runId: 'run-ok', saved: good },
      { runId: 'run-text', saved: new Error('Unexpected token } in JSON') },
      { runId: 'run-uneven', saved: uneven },
      { runId: 'run-huge', saved: huge },
      { runId: 'run-back', saved: backwards },
      { runId: 'run-other', saved: savedSeries('run-ok', 5) },
      { runId: 'run-null', saved: null },
    ]);
    expect(book.series('run-ok')).toEqual(good);
    for (const id of ['run-text', 'run-uneven', 'run-huge', 'run-back', 'run-other', 'run-null']) expect(book.series(id)).toEqual({ runId: id, throughput: null, resources: {} });
    expect(said).toHaveLength(6);
    expect(said[0]).toMatch(/series of run run-text .* not put back \(not JSON: Unexpected token/);
    expect(said[1]).toContain('differ in length');
    expect(said[2]).toMatch(/run run-huge .*throughput.at: Too big: expected array to have <=2400 items/);
    expect(said[3]).toContain('do not ascend');
    expect(said[4]).toContain('it names run "run-ok"');
  });

  it('a row that is not JSON in the state database does not stop the start', () => {
    const dir = dataDir();
    const { h: first, db } = coordinatorOn(dir);
    const runId = finishedRun(first, 3);
    db.database.prepare('UPDATE kv SET value = ? WHERE key = ?').run('{"runId": broken', `run-series:${runId}`);
    const second = coordinatorOn(dir).h;
    expect(second.svc.runs().find((r) => r.id === runId)!.state).toBe('finished');
    expect(second.svc.runSeries(runId)).toEqual({ runId, throughput: null, resources: {} });
  });
});
