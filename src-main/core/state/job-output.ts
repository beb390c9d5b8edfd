/**
 * The tail of each job's output (what its process printed), kept for the Jobs view and for a failure's
 * reason. Appends are batched like run output; a job keeps its last `maxBytes` (UTF-8) — stored as chunks, of
 * which whole old ones are dropped, and cut to exactly `maxBytes` on reading.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { BatchedWriter } from './batched-writer';
import { utf8Tail } from './output-tail-repo';
import { PendingList } from './pending-queues';

export const DEFAULT_MAX_JOB_OUTPUT_BYTES = 256 * 1024;

interface Pending {
  jobId: string;
  data: string;
}

export class JobOutputTail {
  private readonly insert: Statement<{ job: string; data: string; bytes: number }>;
  private readonly sumStmt: Statement<[string], { n: number }>;
  private readonly oldest: Statement<[string], { id: number; bytes: number }>;
  private readonly deleteStmt: Statement<[number]>;
  private readonly listStmt: Statement<[string], { data: string }>;
  private readonly pending: PendingList<Pending>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
    private readonly maxBytes = DEFAULT_MAX_JOB_OUTPUT_BYTES,
  ) {
    // Output for an unknown job is skipped rather than failing the whole batch on the foreign key.
    this.insert = db.prepare('INSERT INTO job_output (job_id, data, bytes) SELECT @job, @data, @bytes WHERE EXISTS (SELECT 1 FROM jobs WHERE id = @job)');
    this.sumStmt = db.prepare('SELECT coalesce(sum(bytes), 0) AS n FROM job_output WHERE job_id = ?');
    this.oldest = db.prepare('SELECT id, bytes FROM job_output WHERE job_id = ? ORDER BY id LIMIT 1');
    this.deleteStmt = db.prepare('DELETE FROM job_output WHERE id = ?');
    this.listStmt = db.prepare('SELECT data FROM job_output WHERE job_id = ? ORDER BY id');
    this.pending = new PendingList(writer, (batch) => this.write(batch));
  }

  /** Queues output of one job (batched); consecutive appends to the same job become one chunk. */
  append(jobId: string, data: string): void {
    if (data.length === 0) return;
    const last = this.pending.last();
    if (last && last.jobId === jobId) {
      last.data += data;
      this.pending.grew(data.length);
    } else {
      this.pending.push({ jobId, data }, data.length);
    }
  }

  /** The job's last `maxBytes` of output ('' for none or an unknown job). */
  read(jobId: string): string {
    const text = this.writer.read(() => this.listStmt.all(jobId)).map((r) => r.data).join('');
    return utf8Tail(text, this.maxBytes).data;
  }

  private write(batch: Pending[]): void {
    const touched = new Set<string>();
    for (const chunk of batch) {
      const { data, bytes } = utf8Tail(chunk.data, this.maxBytes);
      if (this.insert.run({ job: chunk.jobId, data, bytes }).changes > 0) touched.add(chunk.jobId);
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
