// An ended run's worker table is its story (issue 17 defect 2): each worker's steps, samples/s and how its part
// ended (finished, failed at step N, left), frozen when the run ends and the same after the coordinator restarts
// on the same state database — not "Not in this generation" with empty cells. Real SQLite files.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { restoreCoordinator, SqliteCoordinatorStore } from '../../../src-main/core/coordinator-persistence';
import { MAX_RUNS_KEPT } from '../../../src-main/core/coordinator/runs/run-controller';
import { runSnapshot } from '../helpers/snapshots';
import { openStateDb, type StateDb } from '../../../src-main/core/state';
import { Harness } from './harness';

const dirs: string[] = [];
const dbs: StateDb[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function coordinatorOn(dir: string): Harness {
  const db = openStateDb(dir, { batch: { flushMs: 60_000 } });
  dbs.push(db);
  return new Harness({ before: (svc) => restoreCoordinator(db, svc, () => 1_700_000_000_000) });
}

const line = (step: number, sps: number, rank: number) =>
  `GPU_SHARE_PROGRESS {"step":${step},"loss":${(2 / (step + 1)).toFixed(4)},"samples_per_sec":${sps},"rank":${rank},"world_size":2,"total_steps":40}\n`;

describe("an ended run's worker rows", () => {
  it('keep each worker\'s steps, samples/s and end (finished; failed at its step) when the run ends and after a restart', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gs-story-'));
    dirs.push(dir);
    const first = coordinatorOn(dir);
    const [a, g] = first.activeWorkers('alpha', 'gamma');
    const run = first.svc.startRun(first.spec({ maxRestarts: 3 }));
    first.run(1000);
    const say = (w: typeof a, from: number, to: number, sps: number, rank: number) => {
      const generation = first.liveRun().generation;
      for (let s = from; s < to; s++) first.svc.report(w!.workerId, { incarnation: w!.incarnation, reports: [{ type: 'output', runId: run.id, generation, data: line(s, sps, rank) }] });
    };
    say(a, 0, 10, 293, 0);
    say(g, 0, 10, 120, 1);
    first.run(15_000, [a!]); // gamma goes silent at step 9 and is declared failed; alpha goes on alone
    expect(first.liveRun().workerIds).toEqual([a!.workerId]);
    say(a, 10, 40, 293, 0);
    first.run(1000, [a!]);
    a!.exit(0);
    first.run(1000, [a!]);
    const ended = first.svc.runs().find((r) => r.id === run.id)!;
    expect(ended.state).toBe('finished');
    const rows = (r: typeof ended) => r.workerRows.map((w) => ({ node: w.node, step: w.step, sps: w.samplesPerSec, end: w.end }));
    expect(rows(ended)).toEqual([
      { node: 'alpha', step: 39, sps: 293, end: 'finished' },
      { node: 'gamma', step: 9, sps: 120, end: 'failed' },
    ]);
    // Heartbeats after the end do not move the frozen rows.
    a!.progress = { runId: run.id, generation: ended.generation, step: 3, loss: 9, samplesPerSec: 1, resumedFrom: null };
    first.run(2000, [a!]);
    expect(rows(first.svc.runs().find((r) => r.id === run.id)!)).toEqual(rows(ended));

    const second = coordinatorOn(dir);
    const restored = second.svc.runs().find((r) => r.id === run.id)!;
    expect(restored.state).toBe('finished');
    expect(rows(restored)).toEqual(rows(ended));
    // How it communicated is kept too (the page said "decided when a generation starts" after a restart).
    expect(ended.comm).not.toBeNull();
    expect(restored.comm).toEqual(ended.comm);
    expect(restored.commStats ?? null).toEqual(ended.commStats ?? null);
    second.activeWorkers('alpha', 'gamma');
    second.run(2000);
    expect(rows(second.svc.runs().find((r) => r.id === run.id)!)).toEqual(rows(ended));
  });

  it('a worker a later generation went on without is marked left while the members go on', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gs-story-'));
    dirs.push(dir);
    const h = coordinatorOn(dir);
    const [a, b] = h.activeWorkers('alpha', 'beta');
    const run = h.svc.startRun(h.spec({ minWorkers: 1 }));
    h.run(1000);
    h.svc.drainWorker(b!.workerId);
    h.run(3000, [a!]);
    const live = h.svc.runs().find((r) => r.id === run.id)!;
    expect(live.workerRows.find((r) => r.node === 'beta')).toMatchObject({ member: false, end: 'left' });
    expect(live.workerRows.find((r) => r.node === 'alpha')).toMatchObject({ member: true, end: null });
  });
});

describe('what is kept for a run outside its tables', () => {
  it('goes with the run when old runs are pruned, so it stays bounded', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gs-story-'));
    dirs.push(dir);
    const db = openStateDb(dir, { batch: { flushMs: 60_000 } });
    dbs.push(db);
    const store = new SqliteCoordinatorStore(db);
    const comm = { strategy: 'ddp', requested: 'auto', reason: 'one member', localSgdPeriod: null } as never;
    for (let i = 1; i <= MAX_RUNS_KEPT + 5; i++) {
      store.saveRun(runSnapshot({ id: `run-${i}`, state: 'finished', endedAt: 2, comm }));
      store.saveRunSeq(i);
    }
    const kept = db.runs.list().map((r) => r.id);
    expect(kept).toHaveLength(MAX_RUNS_KEPT);
    expect(db.kv.get('run-comm:run-1')).toBeUndefined();
    expect(db.kv.get(`run-comm:run-${MAX_RUNS_KEPT + 5}`)).toMatchObject({ comm });
  });
});
