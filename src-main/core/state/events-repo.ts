/**
 * The coordinator's event log (CoordinatorEvent), acknowledged one by one. The newest `maxEvents` are kept:
 * older ones are deleted in batches once a tenth more have piled up, so an append costs no scan.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { CoordinatorEvent, CoordinatorEventKind, EventSeverity } from '../../../src-shared/training';
import type { BatchedWriter } from './batched-writer';

export const DEFAULT_MAX_EVENTS = 10_000;

interface EventRow {
  seq: number;
  at: number;
  kind: string;
  severity: string;
  message: string;
  worker_id: number | null;
  run_id: string | null;
  generation: number | null;
  job_id: string | null;
  node: string | null;
}

function fromRow(row: EventRow): CoordinatorEvent {
  const event: CoordinatorEvent = { seq: row.seq, at: row.at, kind: row.kind as CoordinatorEventKind, severity: row.severity as EventSeverity, message: row.message };
  if (row.worker_id !== null) event.workerId = row.worker_id;
  if (row.run_id !== null) event.runId = row.run_id;
  if (row.generation !== null) event.generation = row.generation;
  if (row.job_id !== null) event.jobId = row.job_id;
  if (row.node !== null) event.node = row.node;
  return event;
}

const COLUMNS = 'seq, at, kind, severity, message, worker_id, run_id, generation, job_id, node';

export class EventsRepo {
  private readonly insert: Statement<[number, number, string, string, string, number | null, string | null, number | null, string | null, string | null]>;
  private readonly prune: Statement<[number]>;
  private readonly countStmt: Statement<[], { n: number }>;
  private readonly recentStmt: Statement<[number], EventRow>;
  private readonly afterStmt: Statement<[number, number], EventRow>;
  private readonly forRunStmt: Statement<[string], EventRow>;
  private readonly lastSeqStmt: Statement<[], { seq: number | null }>;
  private kept: number;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
    private readonly maxEvents = DEFAULT_MAX_EVENTS,
  ) {
    this.insert = db.prepare(`INSERT INTO events (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.prune = db.prepare('DELETE FROM events WHERE seq NOT IN (SELECT seq FROM events ORDER BY seq DESC LIMIT ?)');
    this.countStmt = db.prepare('SELECT count(*) AS n FROM events');
    this.recentStmt = db.prepare(`SELECT * FROM (SELECT ${COLUMNS} FROM events ORDER BY seq DESC LIMIT ?) ORDER BY seq`);
    this.afterStmt = db.prepare(`SELECT ${COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?`);
    this.forRunStmt = db.prepare(`SELECT ${COLUMNS} FROM events WHERE run_id = ? ORDER BY seq`);
    this.lastSeqStmt = db.prepare('SELECT max(seq) AS seq FROM events');
    this.kept = this.countStmt.get()!.n;
  }

  /** Stores the event under its own seq (acknowledged); a seq already stored is an error. */
  append(event: CoordinatorEvent): void {
    this.writer.writeNow(() => {
      this.insert.run(event.seq, event.at, event.kind, event.severity, event.message, event.workerId ?? null, event.runId ?? null, event.generation ?? null, event.jobId ?? null, event.node ?? null);
      this.kept++;
      if (this.kept > this.maxEvents + Math.max(1, Math.floor(this.maxEvents / 10))) {
        this.prune.run(this.maxEvents);
        this.kept = this.countStmt.get()!.n;
      }
    });
  }

  /** The newest `limit` events (default: all kept), oldest first. */
  recent(limit = this.maxEvents): CoordinatorEvent[] {
    return this.writer.read(() => this.recentStmt.all(limit)).map(fromRow);
  }

  /** Events after `seq`, oldest first. */
  after(seq: number, limit = this.maxEvents): CoordinatorEvent[] {
    return this.writer.read(() => this.afterStmt.all(seq, limit)).map(fromRow);
  }

  forRun(runId: string): CoordinatorEvent[] {
    return this.writer.read(() => this.forRunStmt.all(runId)).map(fromRow);
  }

  /** The highest seq stored (0 when none): where the coordinator's numbering goes on after a restart. */
  lastSeq(): number {
    return this.writer.read(() => this.lastSeqStmt.get()!.seq) ?? 0;
  }
}
