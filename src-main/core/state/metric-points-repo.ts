/**
 * The trainer's other numbers per run (`lr`, `eval_loss`…: src-shared/runs/progress-metrics.ts), a point per
 * metric and step. Batched like loss points (one per progress line). The coordinator's curves
 * (coordinator/run-metrics.ts) are already capped and thinned: the persistence layer writes each one from its
 * first difference with what it wrote, so this repository only drops a metric's points from a step and inserts.
 * It caps the names per run too, so a database written by hand cannot grow a run's charts past the limit.
 */
import type { Database, Statement } from 'better-sqlite3';
import { MAX_RUN_METRICS } from '../../../src-shared/runs/progress-metrics';
import type { MetricPoint, MetricSeries } from '../../../src-shared/training';
import type { BatchedWriter } from './batched-writer';
import { PendingList } from './pending-queues';

interface Pending {
  runId: string;
  name: string;
  dropFrom: number;
  points: MetricPoint[];
}

interface MetricRow extends MetricPoint {
  name: string;
}

export class MetricPointsRepo {
  private readonly dropFrom: Statement<[string, string, number]>;
  private readonly insert: Statement<{ run: string; name: string; step: number; value: number; generation: number }>;
  private readonly listStmt: Statement<[string], MetricRow>;
  private readonly pending: PendingList<Pending>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
  ) {
    this.dropFrom = db.prepare('DELETE FROM metric_points WHERE run_id = ? AND name = ? AND step >= ?');
    // A point for a run deleted meanwhile is skipped rather than failing the whole batch on the foreign key.
    this.insert = db.prepare(
      'INSERT OR REPLACE INTO metric_points (run_id, name, step, value, generation) SELECT @run, @name, @step, @value, @generation WHERE EXISTS (SELECT 1 FROM runs WHERE id = @run)',
    );
    this.listStmt = db.prepare('SELECT name, step, value, generation FROM metric_points WHERE run_id = ? ORDER BY name, step');
    this.pending = new PendingList(writer, (batch) => this.write(batch));
  }

  /** Queues replacing the metric's points from step `dropFrom` on with `points` (batched); non-finite values are skipped. */
  replaceFrom(runId: string, name: string, dropFrom: number, points: readonly MetricPoint[]): void {
    if (!Number.isSafeInteger(dropFrom)) return;
    const kept = points.filter((p) => Number.isFinite(p.value) && Number.isSafeInteger(p.step)).map(({ step, value, generation }) => ({ step, value, generation }));
    this.pending.push({ runId, name, dropFrom, points: kept }, 32 + runId.length + name.length + 24 * kept.length);
  }

  /** The run's metrics, by name, each by step (at most MAX_RUN_METRICS names: the first by name). */
  list(runId: string): MetricSeries[] {
    const series: MetricSeries[] = [];
    for (const { name, step, value, generation } of this.writer.read(() => this.listStmt.all(runId))) {
      let last = series.at(-1);
      if (!last || last.name !== name) {
        if (series.length >= MAX_RUN_METRICS) break;
        last = { name, points: [] };
        series.push(last);
      }
      last.points.push({ step, value, generation });
    }
    return series;
  }

  private write(batch: Pending[]): void {
    for (const { runId, name, dropFrom, points } of batch) {
      this.dropFrom.run(runId, name, dropFrom);
      for (const p of points) this.insert.run({ run: runId, name, step: p.step, value: p.value, generation: p.generation });
    }
  }
}
