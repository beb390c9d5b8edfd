/**
 * One row per worker that took part in a run (RunWorkerRow): membership and the restarts it caused are
 * acknowledged; its latest step, loss and samples/s (one per progress line) are batched.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { RunWorkerEnd, RunWorkerRow } from '../../../src-shared/training';
import type { BatchedWriter } from './batched-writer';
import { PendingMap } from './pending-queues';

export type WorkerProgress = Pick<RunWorkerRow, 'step' | 'loss' | 'samplesPerSec'>;

interface Row {
  worker_id: number;
  node: string;
  member: number;
  step: number | null;
  loss: number | null;
  samples_per_sec: number | null;
  restarts_caused: number;
  end_state: RunWorkerEnd | null;
}

/** SQLite stores NaN as NULL, which a REAL column then refuses to round-trip; say "unknown" plainly. */
function finiteOrNull(value: number | null): number | null {
  return value !== null && Number.isFinite(value) ? value : null;
}

export class RunWorkersRepo {
  private readonly upsertStmt: Statement<[string, number, string, number, number | null, number | null, number | null, number, RunWorkerEnd | null]>;
  private readonly progressStmt: Statement<[number | null, number | null, number | null, string, number]>;
  private readonly clearMembers: Statement<[string]>;
  private readonly setMember: Statement<[string, number]>;
  private readonly listStmt: Statement<[string], Row>;
  private readonly pending: PendingMap<string, { runId: string; workerId: number; progress: WorkerProgress }>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
  ) {
    this.upsertStmt = db.prepare(
      'INSERT INTO run_workers (run_id, worker_id, node, member, step, loss, samples_per_sec, restarts_caused, end_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ' +
        'ON CONFLICT (run_id, worker_id) DO UPDATE SET node = excluded.node, member = excluded.member, step = excluded.step, ' +
        'loss = excluded.loss, samples_per_sec = excluded.samples_per_sec, restarts_caused = excluded.restarts_caused, end_state = excluded.end_state',
    );
    this.progressStmt = db.prepare('UPDATE run_workers SET step = ?, loss = ?, samples_per_sec = ? WHERE run_id = ? AND worker_id = ?');
    this.clearMembers = db.prepare('UPDATE run_workers SET member = 0 WHERE run_id = ?');
    this.setMember = db.prepare('UPDATE run_workers SET member = 1 WHERE run_id = ? AND worker_id = ?');
    this.listStmt = db.prepare('SELECT worker_id, node, member, step, loss, samples_per_sec, restarts_caused, end_state FROM run_workers WHERE run_id = ? ORDER BY worker_id');
    this.pending = new PendingMap(writer, (batch) => {
      for (const [, { runId, workerId, progress: p }] of batch) {
        this.progressStmt.run(p.step, finiteOrNull(p.loss), finiteOrNull(p.samplesPerSec), runId, workerId);
      }
    });
  }

  /** Inserts or replaces the worker's row of this run (acknowledged). */
  save(runId: string, row: RunWorkerRow): void {
    this.writer.writeNow(() =>
      this.upsertStmt.run(runId, row.workerId, row.node, row.member ? 1 : 0, row.step, finiteOrNull(row.loss), finiteOrNull(row.samplesPerSec), row.restartsCaused, row.end ?? null),
    );
  }

  /** Marks exactly these workers as the current generation's members (acknowledged; rows must exist). */
  setMembers(runId: string, workerIds: readonly number[]): void {
    this.writer.writeNow(() => {
      this.clearMembers.run(runId);
      for (const id of workerIds) this.setMember.run(runId, id);
    });
  }

  /** The worker's latest progress in this run (batched; ignored if the row does not exist by then). */
  setProgress(runId: string, workerId: number, progress: WorkerProgress): void {
    this.pending.set(`${workerId}\u0000${runId}`, { runId, workerId, progress: { ...progress } }, 48 + runId.length);
  }

  list(runId: string): RunWorkerRow[] {
    return this.writer
      .read(() => this.listStmt.all(runId))
      .map((r) => ({
        workerId: r.worker_id,
        node: r.node,
        member: r.member === 1,
        step: r.step,
        loss: r.loss,
        samplesPerSec: r.samples_per_sec,
        restartsCaused: r.restarts_caused,
        end: r.end_state,
      }));
  }
}
