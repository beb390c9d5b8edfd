/**
 * Loss per step for each run's curve, tagged with the generation that trained it. Batched: there is one point
 * per progress line. A point at or before the run's last step means the trainer resumed from an earlier
 * checkpoint, so the points from that step on are replaced (as coordinator/loss-history.ts does); a caller
 * that rewrites part of the curve (a late rank's line inserted before the newest point, the curve thinned)
 * names the step to replace from. Past the cap every other point is dropped (the last is kept), so a week-long
 * run keeps a curve over all of it.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { LossPoint } from '../../../src-shared/training';
import type { BatchedWriter } from './batched-writer';
import { PendingList } from './pending-queues';

export const DEFAULT_MAX_LOSS_POINTS = 4000;

export class LossPointsRepo {
  private readonly dropFrom: Statement<[string, number]>;
  private readonly insert: Statement<{ run: string; step: number; loss: number; generation: number }>;
  private readonly count: Statement<[string], { n: number }>;
  private readonly thin: Statement<{ run: string }>;
  private readonly listStmt: Statement<[string], LossPoint>;
  private readonly pending: PendingList<{ runId: string; point: LossPoint | null; dropFrom: number }>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
    private readonly maxPoints = DEFAULT_MAX_LOSS_POINTS,
  ) {
    this.dropFrom = db.prepare('DELETE FROM loss_points WHERE run_id = ? AND step >= ?');
    // A point for a run deleted meanwhile is skipped rather than failing the whole batch on the foreign key.
    this.insert = db.prepare(
      'INSERT INTO loss_points (run_id, step, loss, generation) SELECT @run, @step, @loss, @generation WHERE EXISTS (SELECT 1 FROM runs WHERE id = @run)',
    );
    this.count = db.prepare('SELECT count(*) AS n FROM loss_points WHERE run_id = ?');
    this.thin = db.prepare(
      'DELETE FROM loss_points WHERE run_id = @run AND step IN (SELECT step FROM ' +
        '(SELECT step, row_number() OVER (ORDER BY step) AS rn, count(*) OVER () AS n FROM loss_points WHERE run_id = @run) ' +
        'WHERE rn % 2 = 0 AND rn <> n)',
    );
    this.listStmt = db.prepare('SELECT step, loss, generation FROM loss_points WHERE run_id = ? ORDER BY step');
    this.pending = new PendingList(writer, (batch) => this.write(batch));
  }

  /**
   * Queues a point (batched); the run's points from `dropFrom` (default: the point's step) on go first. A loss
   * that is not a finite number is ignored.
   */
  add(runId: string, point: LossPoint, dropFrom = point.step): void {
    if (!Number.isFinite(point.loss) || !Number.isSafeInteger(point.step)) return;
    this.pending.push({ runId, point: { step: point.step, loss: point.loss, generation: point.generation }, dropFrom: Math.min(dropFrom, point.step) }, 32 + runId.length);
  }

  /** Queues dropping the run's points from `step` on (batched): the curve no longer has them. */
  dropFromStep(runId: string, step: number): void {
    if (!Number.isSafeInteger(step)) return;
    this.pending.push({ runId, point: null, dropFrom: step }, 16 + runId.length);
  }

  /** The run's points, by step. */
  list(runId: string): LossPoint[] {
    return this.writer.read(() => this.listStmt.all(runId)).map((p) => ({ ...p }));
  }

  private write(batch: { runId: string; point: LossPoint | null; dropFrom: number }[]): void {
    const touched = new Set<string>();
    for (const { runId, point, dropFrom } of batch) {
      this.dropFrom.run(runId, dropFrom);
      if (!point) continue;
      this.insert.run({ run: runId, step: point.step, loss: point.loss, generation: point.generation });
      touched.add(runId);
    }
    for (const runId of touched) {
      while (this.count.get(runId)!.n > this.maxPoints) this.thin.run({ run: runId });
    }
  }
}
