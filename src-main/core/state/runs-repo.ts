/**
 * Runs: one row per run with the scalar parts of RunSnapshot. Saving a run is acknowledged; its latest
 * progress (every progress line) is batched. Shard history, generation marks, loss points, worker rows and
 * output live in their own tables; run-snapshots.ts puts a RunSnapshot back together.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { ResidencyVerdict, RunProgress, RunSnapshot, RunSpec, RunState } from '../../../src-shared/training';
import type { BatchedWriter } from './batched-writer';
import { PendingMap } from './pending-queues';

/** The part of a RunSnapshot kept in the runs table. */
export type StoredRun = Omit<RunSnapshot, 'shardHistory' | 'lossHistory' | 'metrics' | 'generationMarks' | 'workerRows'>;

export interface RunRow {
  id: string;
  spec: string;
  state: string;
  state_cause: string;
  generation: number;
  restarts_used: number;
  started_at: number;
  ended_at: number | null;
  worker_ids: string;
  progress: string | null;
  residency: string;
  rdzv_endpoint: string | null;
  worker_failures: number;
  tags: string;
  note: string;
}

const ENDED_STATES = ['finished', 'failed', 'stopped'];
const COLUMNS = 'id, spec, state, state_cause, generation, restarts_used, started_at, ended_at, worker_ids, progress, residency, rdzv_endpoint, worker_failures, tags, note';

export function toRow(run: StoredRun): RunRow {
  return {
    id: run.id,
    spec: JSON.stringify(run.spec),
    state: run.state,
    state_cause: run.stateCause,
    generation: run.generation,
    restarts_used: run.restartsUsed,
    started_at: run.startedAt,
    ended_at: run.endedAt,
    worker_ids: JSON.stringify(run.workerIds),
    progress: run.progress === null ? null : JSON.stringify(run.progress),
    residency: JSON.stringify(run.residency),
    rdzv_endpoint: run.rdzvEndpoint,
    worker_failures: run.workerFailures,
    tags: JSON.stringify(run.tags ?? []),
    note: run.note ?? '',
  };
}

/** A run's tags and note as kept; none are left out of the snapshot, as a run never labelled has them. */
function labelsOf(row: RunRow): { tags?: string[]; note?: string } {
  const tags = JSON.parse(row.tags) as string[];
  return { ...(tags.length > 0 ? { tags } : {}), ...(row.note ? { note: row.note } : {}) };
}

function fromRow(row: RunRow): StoredRun {
  return {
    id: row.id,
    spec: JSON.parse(row.spec) as RunSpec,
    state: row.state as RunState,
    stateCause: row.state_cause,
    generation: row.generation,
    restartsUsed: row.restarts_used,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    workerIds: JSON.parse(row.worker_ids) as number[],
    progress: row.progress === null ? null : (JSON.parse(row.progress) as RunProgress),
    residency: JSON.parse(row.residency) as Record<number, ResidencyVerdict>,
    rdzvEndpoint: row.rdzv_endpoint,
    workerFailures: row.worker_failures,
    ...labelsOf(row),
  };
}

export class RunsRepo {
  private readonly upsert: Statement<[RunRow]>;
  private readonly getStmt: Statement<[string], RunRow>;
  private readonly listStmt: Statement<[], RunRow>;
  private readonly deleteStmt: Statement<[string]>;
  private readonly progressStmt: Statement<[string | null, string]>;
  private readonly prunableStmt: Statement<[number], { id: string }>;
  private readonly pendingProgress: PendingMap<string, RunProgress | null>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
  ) {
    const updates = COLUMNS.split(', ')
      .slice(1)
      .map((c) => `${c} = excluded.${c}`)
      .join(', ');
    const params = COLUMNS.split(', ')
      .map((c) => `@${c}`)
      .join(', ');
    this.upsert = db.prepare(`INSERT INTO runs (${COLUMNS}) VALUES (${params}) ON CONFLICT (id) DO UPDATE SET ${updates}`);
    this.getStmt = db.prepare(`SELECT ${COLUMNS} FROM runs WHERE id = ?`);
    this.listStmt = db.prepare(`SELECT ${COLUMNS} FROM runs ORDER BY pos`);
    this.deleteStmt = db.prepare('DELETE FROM runs WHERE id = ?');
    this.progressStmt = db.prepare('UPDATE runs SET progress = ? WHERE id = ?');
    const ended = ENDED_STATES.map((s) => `'${s}'`).join(', ');
    this.prunableStmt = db.prepare(`SELECT id FROM runs WHERE state IN (${ended}) AND pos NOT IN (SELECT pos FROM runs ORDER BY pos DESC LIMIT ?) ORDER BY pos`);
    this.pendingProgress = new PendingMap(writer, (batch) => {
      for (const [runId, progress] of batch) this.progressStmt.run(progress === null ? null : JSON.stringify(progress), runId);
    });
  }

  /** Inserts or replaces the run (acknowledged); its place in list() is where it was first saved. */
  save(run: StoredRun): void {
    const row = toRow(run);
    this.writer.writeNow(() => this.upsert.run(row));
  }

  /** The run's latest progress (batched; a later save() carries its own). */
  setProgress(runId: string, progress: RunProgress | null): void {
    this.pendingProgress.set(runId, progress === null ? null : { ...progress }, 64 + runId.length);
  }

  get(runId: string): StoredRun | null {
    const row = this.writer.read(() => this.getStmt.get(runId));
    return row ? fromRow(row) : null;
  }

  /** Every run, oldest first. */
  list(): StoredRun[] {
    return this.writer.read(() => this.listStmt.all()).map(fromRow);
  }

  /** Deletes the run and everything kept for it (shard maps, marks, loss, worker rows, output). */
  delete(runId: string): void {
    this.writer.writeNow(() => this.deleteStmt.run(runId));
  }

  /** Deletes ended runs older than the newest `keep` runs (a live run is never pruned); returns their ids. */
  prune(keep: number): string[] {
    return this.writer.writeNow(() => {
      const ids = this.prunableStmt.all(keep).map((r) => r.id);
      for (const id of ids) this.deleteStmt.run(id);
      return ids;
    });
  }
}
