// Runs and everything kept per run: a RunSnapshot saved across the tables comes back whole, progress is
// batched, deleting and pruning take the run's rows with them.
import { describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../../src-shared/training';
import type { StateDb } from '../../../src-main/core/state/index';
import { fullRun, storedRun } from './fixtures';
import { closeTemp, openTemp, tempDataDir } from './temp-state';

/** Writes a RunSnapshot through the repositories, the way the coordinator will. */
function saveWhole(db: StateDb, run: RunSnapshot): void {
  const { shardHistory, lossHistory, generationMarks, workerRows, ...stored } = run;
  db.runs.save(stored);
  shardHistory.forEach((map) => db.generations.recordShardMap(run.id, map));
  generationMarks.forEach((mark) => db.generations.markGeneration(run.id, mark));
  lossHistory.forEach((point) => db.lossPoints.add(run.id, point));
  workerRows.forEach((row) => db.runWorkers.save(run.id, row));
}

function count(db: StateDb, table: string, runId: string): number {
  return (db.database.prepare(`SELECT count(*) AS n FROM ${table} WHERE run_id = ?`).get(runId) as { n: number }).n;
}

describe('runs', () => {
  it('round-trips a whole RunSnapshot across a reopening', () => {
    const dir = tempDataDir();
    const first = openTemp(dir);
    const run = fullRun('run-1-abc123');
    saveWhole(first, run);
    closeTemp(first);
    const again = openTemp(dir);
    expect(again.loadRun(run.id)).toEqual(run);
    expect(again.loadRuns()).toEqual([run]);
    expect(again.loadRun('run-404')).toBeNull();
  });

  it("keeps a run's tags and note across a reopening (schema 7), and a run without them has none", () => {
    const dir = tempDataDir();
    const first = openTemp(dir);
    first.runs.save(storedRun('run-1', { tags: ['lr-3', 'baseline'], note: 'the first try' }));
    first.runs.save(storedRun('run-2'));
    closeTemp(first);
    const again = openTemp(dir);
    expect(again.runs.get('run-1')).toMatchObject({ tags: ['lr-3', 'baseline'], note: 'the first try' });
    expect(again.runs.get('run-2')).not.toHaveProperty('tags');
    expect(again.runs.get('run-2')).not.toHaveProperty('note');
  });

  it('updates a run in place and lists runs in the order they were first saved', () => {
    const db = openTemp();
    db.runs.save(storedRun('run-1'));
    db.runs.save(storedRun('run-2'));
    const ended = storedRun('run-1', { state: 'finished', stateCause: 'finished: 1 worker failed on the way', endedAt: 1_700_000_900_000, progress: null, rdzvEndpoint: null });
    db.runs.save(ended);
    expect(db.runs.list().map((r) => r.id)).toEqual(['run-1', 'run-2']);
    expect(db.runs.get('run-1')).toEqual(ended);
  });

  it('batches progress: not in the file until a flush, then there and read back', () => {
    const db = openTemp(tempDataDir(), { batch: { flushMs: 60_000 } });
    db.runs.save(storedRun('run-1', { progress: null }));
    const progress = { step: 7, totalSteps: null, loss: 0.5, samplesPerSec: null, resumedFrom: null, at: 5 };
    db.runs.setProgress('run-1', progress);
    const raw = () => (db.database.prepare('SELECT progress FROM runs WHERE id = ?').get('run-1') as { progress: string | null }).progress;
    expect(raw()).toBeNull();
    expect(db.runs.get('run-1')!.progress).toEqual(progress); // a read flushes first
    expect(JSON.parse(raw()!)).toEqual(progress);
  });

  it('a save after batched progress wins (writes land in call order)', () => {
    const db = openTemp(tempDataDir(), { batch: { flushMs: 60_000 } });
    db.runs.save(storedRun('run-1'));
    db.runs.setProgress('run-1', { step: 1, totalSteps: null, loss: null, samplesPerSec: null, resumedFrom: null, at: 1 });
    db.runs.save(storedRun('run-1', { progress: null }));
    expect(db.runs.get('run-1')!.progress).toBeNull();
  });

  it('deleting a run deletes its shard maps, marks, loss, worker rows and output', () => {
    const db = openTemp();
    saveWhole(db, fullRun('run-1'));
    db.output.append('run-1', { workerId: 1, node: 'desk', data: 'step 1\n' });
    db.flush();
    for (const table of ['shard_maps', 'generation_marks', 'loss_points', 'run_workers', 'run_output']) expect(count(db, table, 'run-1')).toBeGreaterThan(0);
    db.runs.delete('run-1');
    for (const table of ['shard_maps', 'generation_marks', 'loss_points', 'run_workers', 'run_output']) expect(count(db, table, 'run-1')).toBe(0);
    expect(db.runs.list()).toEqual([]);
  });

  it('prunes the oldest ended runs beyond the newest N, never a live one', () => {
    const db = openTemp();
    db.runs.save(storedRun('old-live', { state: 'paused' }));
    for (let i = 1; i <= 5; i++) db.runs.save(storedRun(`run-${i}`, { state: 'finished', endedAt: i }));
    expect(db.runs.prune(2)).toEqual(['run-1', 'run-2', 'run-3']);
    expect(db.runs.list().map((r) => r.id)).toEqual(['old-live', 'run-4', 'run-5']);
    expect(db.runs.prune(0)).toEqual(['run-4', 'run-5']);
  });

  it('refuses a shard map for a run that was never saved (acknowledged writes fail loudly)', () => {
    const db = openTemp();
    expect(() => db.generations.recordShardMap('ghost', fullRun('ghost').shardHistory[0]!)).toThrow(/FOREIGN KEY/);
  });
});

describe('generations', () => {
  it('keeps the newest shard maps per run past the cap, and a second mark for a generation replaces the first', () => {
    const db = openTemp(tempDataDir(), { limits: { maxShardMaps: 3 } });
    db.runs.save(storedRun('run-1'));
    for (let g = 1; g <= 5; g++) db.generations.recordShardMap('run-1', { generation: g, totalSamples: 10, shards: [], at: g, cause: `gen ${g}` });
    expect(db.generations.shardHistory('run-1').map((m) => m.generation)).toEqual([3, 4, 5]);
    const map = { generation: 6, totalSamples: 10, shards: [{ workerId: 1, node: 'a', start: 0, end: 10 }], at: 6, cause: 'worker b failed' };
    db.generations.startGeneration('run-1', map, { generation: 6, step: 40, at: 6, cause: 'worker b failed' });
    db.generations.markGeneration('run-1', { generation: 6, step: 45, at: 7, cause: 'resumed from checkpoint 45' });
    expect(db.generations.shardHistory('run-1').at(-1)).toEqual(map);
    expect(db.generations.marks('run-1')).toEqual([{ generation: 6, step: 45, at: 7, cause: 'resumed from checkpoint 45' }]);
  });
});

describe('loss points', () => {
  it('replaces the points from a resumed step on, ignores non-finite losses, and thins past the cap keeping the last', () => {
    const db = openTemp(tempDataDir(), { limits: { maxLossPoints: 8 } });
    db.runs.save(storedRun('run-1'));
    for (let step = 0; step < 6; step++) db.lossPoints.add('run-1', { step, loss: 10 - step, generation: 1 });
    db.lossPoints.add('run-1', { step: 3, loss: 6.5, generation: 2 }); // resumed from the step-3 checkpoint
    db.lossPoints.add('run-1', { step: 4, loss: Number.NaN, generation: 2 });
    expect(db.lossPoints.list('run-1')).toEqual([
      { step: 0, loss: 10, generation: 1 },
      { step: 1, loss: 9, generation: 1 },
      { step: 2, loss: 8, generation: 1 },
      { step: 3, loss: 6.5, generation: 2 },
    ]);
    for (let step = 4; step < 20; step++) db.lossPoints.add('run-1', { step, loss: 1, generation: 2 });
    const kept = db.lossPoints.list('run-1');
    expect(kept.length).toBeLessThanOrEqual(8);
    expect(kept[0]!.step).toBe(0);
    expect(kept.at(-1)!.step).toBe(19);
  });

  it('skips points of a run deleted before the flush instead of failing the batch', () => {
    const db = openTemp(tempDataDir(), { batch: { flushMs: 60_000 } });
    db.runs.save(storedRun('run-1'));
    db.runs.save(storedRun('run-2'));
    db.lossPoints.add('run-1', { step: 1, loss: 1, generation: 1 });
    db.lossPoints.add('run-2', { step: 1, loss: 2, generation: 1 });
    db.database.prepare('DELETE FROM runs WHERE id = ?').run('run-1'); // behind the writer's back
    db.flush();
    expect(db.lossPoints.list('run-2')).toEqual([{ step: 1, loss: 2, generation: 1 }]);
  });
});

describe('run workers', () => {
  it('sets the members of the current generation and batches their progress', () => {
    const db = openTemp();
    db.runs.save(storedRun('run-1'));
    for (const id of [1, 2, 3]) db.runWorkers.save('run-1', { workerId: id, node: `n${id}`, member: true, step: null, loss: null, samplesPerSec: null, restartsCaused: 0 });
    db.runWorkers.setMembers('run-1', [1, 3]);
    db.runWorkers.setProgress('run-1', 3, { step: 9, loss: Number.POSITIVE_INFINITY, samplesPerSec: 20 });
    db.runWorkers.setProgress('run-1', 3, { step: 10, loss: 0.25, samplesPerSec: 21 });
    db.runWorkers.setProgress('run-1', 99, { step: 10, loss: 0.25, samplesPerSec: 21 }); // no such row: ignored
    expect(db.runWorkers.list('run-1')).toEqual([
      { workerId: 1, node: 'n1', member: true, step: null, loss: null, samplesPerSec: null, restartsCaused: 0, end: null },
      { workerId: 2, node: 'n2', member: false, step: null, loss: null, samplesPerSec: null, restartsCaused: 0, end: null },
      { workerId: 3, node: 'n3', member: true, step: 10, loss: 0.25, samplesPerSec: 21, restartsCaused: 0, end: null },
    ]);
  });
});
