/**
 * The tail of each job's output (what its process printed), kept for the Jobs view and for a failure's
 * reason. Appends are batched like run output; a job keeps its last `maxBytes` (UTF-8) — stored as chunks, of
 * which whole old ones are dropped, and cut to exactly `maxBytes` on reading. Each chunk keeps when the coordinator
 * received it (schema 9), so a line has a time as a run's output line does (issue 25, item 7).
 */
import type { Database, Statement } from 'better-sqlite3';
import type { BatchedWriter } from './batched-writer';
import { utf8Tail } from './output-tail-repo';
import { PendingList } from './pending-queues';

export const DEFAULT_MAX_JOB_OUTPUT_BYTES = 256 * 1024;

interface Pending {
  jobId: string;
  data: string;
  at: number | null;
}

/** A job's kept output and, per line of it, when the coordinator received that line's end (null: not recorded). */
export interface TimedJobOutput {
  text: string;
  times: (number | null)[];
}

function newlines(text: string, end = text.length): number {
  let n = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < end; at = text.indexOf('\n', at + 1)) n++;
  return n;
}

export class JobOutputTail {
  private readonly insert: Statement<{ job: string; data: string; bytes: number; at: number | null }>;
  private readonly sumStmt: Statement<[string], { n: number }>;
  private readonly oldest: Statement<[string], { id: number; bytes: number }>;
  private readonly deleteStmt: Statement<[number]>;
  private readonly listStmt: Statement<[string], { data: string; received_at: number | null }>;
  private readonly pending: PendingList<Pending>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
    private readonly maxBytes = DEFAULT_MAX_JOB_OUTPUT_BYTES,
  ) {
    // Output for an unknown job is skipped rather than failing the whole batch on the foreign key.
    this.insert = db.prepare('INSERT INTO job_output (job_id, data, bytes, received_at) SELECT @job, @data, @bytes, @at WHERE EXISTS (SELECT 1 FROM jobs WHERE id = @job)');
    this.sumStmt = db.prepare('SELECT coalesce(sum(bytes), 0) AS n FROM job_output WHERE job_id = ?');
    this.oldest = db.prepare('SELECT id, bytes FROM job_output WHERE job_id = ? ORDER BY id LIMIT 1');
    this.deleteStmt = db.prepare('DELETE FROM job_output WHERE id = ?');
    this.listStmt = db.prepare('SELECT data, received_at FROM job_output WHERE job_id = ? ORDER BY id');
    this.pending = new PendingList(writer, (batch) => this.write(batch));
  }

  /**
   * Queues output of one job received at `at` (batched); consecutive appends to the same job within the same second
   * become one chunk (times are shown to the second).
   */
  append(jobId: string, data: string, at: number | null = null): void {
    if (data.length === 0) return;
    const last = this.pending.last();
    const sameSecond = last !== undefined && (last.at === null || at === null ? last.at === at : Math.floor(last.at / 1000) === Math.floor(at / 1000));
    if (last && last.jobId === jobId && sameSecond) {
      last.data += data;
      this.pending.grew(data.length);
    } else {
      this.pending.push({ jobId, data, at }, data.length);
    }
  }

  /** The job's last `maxBytes` of output ('' for none or an unknown job). */
  read(jobId: string): string {
    return this.readTimed(jobId).text;
  }

  /** The job's last `maxBytes` of output and its lines' times (a line is stamped when its end came; the unfinished last one, its latest part). */
  readTimed(jobId: string): TimedJobOutput {
    const rows = this.writer.read(() => this.listStmt.all(jobId));
    const whole = rows.map((r) => r.data).join('');
    const times: (number | null)[] = [];
    for (const r of rows) for (let n = newlines(r.data); n > 0; n--) times.push(r.received_at);
    const text = utf8Tail(whole, this.maxBytes).data;
    if (!whole.endsWith('\n') && rows.length > 0) times.push(rows.at(-1)!.received_at);
    // Lines whose ends were cut off with the oldest bytes lose their times too.
    return { text, times: times.slice(newlines(whole, whole.length - text.length)) };
  }

  private write(batch: Pending[]): void {
    const touched = new Set<string>();
    for (const chunk of batch) {
      const { data, bytes } = utf8Tail(chunk.data, this.maxBytes);
      if (this.insert.run({ job: chunk.jobId, data, bytes, at: chunk.at }).changes > 0) touched.add(chunk.jobId);
    }
    for (const jobId of touched) this.trim(jobId);
  }

  /** Drops whole oldest chunks while what remains still holds maxBytes. */
  private trim(jobId: string): void {
    let total = this.sumStmt.get(jobId)!.n;
    for (let oldest = this.oldest.get(jobId); oldest && total - oldest.bytes >= this.maxBytes; oldest = this.oldest.get(jobId)) {
      this.deleteStmt.run(oldest.id);
      total -= oldest.bytes;
    }
  }
}
