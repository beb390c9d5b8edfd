/**
 * The tail of each run's output, as the workers streamed it: chunks of {workerId, node, data, at}, oldest first,
 * at most `maxBytes` (UTF-8) per run; the oldest bytes are trimmed, cutting a chunk's head on a character
 * boundary where needed. Appends are batched (output is the most frequent write there is); consecutive
 * appends from the same worker within the same second are merged into one row (`at`, when the coordinator
 * received it, is shown to the second).
 */
import type { Database, Statement } from 'better-sqlite3';
import type { BatchedWriter } from './batched-writer';
import { PendingList } from './pending-queues';

export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
const TRIM_PAGE = 256;

export interface OutputChunk {
  workerId: number;
  node: string;
  data: string;
  /** Epoch ms the coordinator received it; null for output kept before that was recorded. */
  at?: number | null;
}

interface Pending extends OutputChunk {
  runId: string;
}

/** The last `maxBytes` bytes of `text` as UTF-8, starting on a character boundary. */
export function utf8Tail(text: string, maxBytes: number): { data: string; bytes: number } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return { data: text, bytes: buf.length };
  let start = buf.length - maxBytes;
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return { data: buf.subarray(start).toString('utf8'), bytes: buf.length - start };
}

export class OutputTailRepo {
  private readonly insert: Statement<{ run: string; worker: number; node: string; data: string; bytes: number; at: number | null }>;
  private readonly sumStmt: Statement<[string], { n: number }>;
  private readonly oldest: Statement<[string, number], { id: number; data: string; bytes: number }>;
  private readonly deleteStmt: Statement<[number]>;
  private readonly shrink: Statement<[string, number, number]>;
  private readonly listStmt: Statement<[string], { worker_id: number; node: string; data: string; received_at: number | null }>;
  private readonly pending: PendingList<Pending>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
    private readonly maxBytes = DEFAULT_MAX_OUTPUT_BYTES,
  ) {
    // Output for a run deleted meanwhile is skipped rather than failing the whole batch on the foreign key.
    this.insert = db.prepare(
      'INSERT INTO run_output (run_id, worker_id, node, data, bytes, received_at) SELECT @run, @worker, @node, @data, @bytes, @at WHERE EXISTS (SELECT 1 FROM runs WHERE id = @run)',
    );
    this.sumStmt = db.prepare('SELECT coalesce(sum(bytes), 0) AS n FROM run_output WHERE run_id = ?');
    this.oldest = db.prepare('SELECT id, data, bytes FROM run_output WHERE run_id = ? ORDER BY id LIMIT ?');
    this.deleteStmt = db.prepare('DELETE FROM run_output WHERE id = ?');
    this.shrink = db.prepare('UPDATE run_output SET data = ?, bytes = ? WHERE id = ?');
    this.listStmt = db.prepare('SELECT worker_id, node, data, received_at FROM run_output WHERE run_id = ? ORDER BY id');
    this.pending = new PendingList(writer, (batch) => this.write(batch));
  }

  /** Queues output from one worker (batched). */
  append(runId: string, chunk: OutputChunk): void {
    if (chunk.data.length === 0) return;
    const last = this.pending.last();
    const at = chunk.at ?? null;
    const sameSecond = (last?.at ?? null) === null ? at === null : at !== null && Math.floor(last!.at! / 1000) === Math.floor(at / 1000);
    if (last && last.runId === runId && last.workerId === chunk.workerId && last.node === chunk.node && sameSecond) {
      last.data += chunk.data;
      this.pending.grew(chunk.data.length);
    } else {
      this.pending.push({ runId, workerId: chunk.workerId, node: chunk.node, data: chunk.data, at }, chunk.data.length);
    }
  }

  /** The run's kept output, oldest first. */
  tail(runId: string): OutputChunk[] {
    return this.writer.read(() => this.listStmt.all(runId)).map((r) => ({ workerId: r.worker_id, node: r.node, data: r.data, ...(r.received_at === null ? {} : { at: r.received_at }) }));
  }

  /** UTF-8 bytes kept for the run. */
  bytes(runId: string): number {
    return this.writer.read(() => this.total(runId));
  }

  private write(batch: Pending[]): void {
    const touched = new Set<string>();
    for (const chunk of batch) {
      const { data, bytes } = utf8Tail(chunk.data, this.maxBytes);
      const stored = this.insert.run({ run: chunk.runId, worker: chunk.workerId, node: chunk.node, data, bytes, at: chunk.at ?? null }).changes > 0;
      if (stored) touched.add(chunk.runId);
    }
    for (const runId of touched) this.trim(runId);
  }

  private total(runId: string): number {
    return this.sumStmt.get(runId)!.n;
  }

  /** Drops the oldest bytes until the run is within maxBytes. */
  private trim(runId: string): void {
    let total = this.total(runId);
    while (total > this.maxBytes) {
      const rows = this.oldest.all(runId, TRIM_PAGE);
      if (rows.length === 0) break;
      for (const row of rows) {
        const excess = total - this.maxBytes;
        if (excess <= 0) break;
        if (row.bytes <= excess) {
          this.deleteStmt.run(row.id);
          total -= row.bytes;
        } else {
          const kept = utf8Tail(row.data, row.bytes - excess);
          this.shrink.run(kept.data, kept.bytes, row.id);
          total -= row.bytes - kept.bytes;
        }
      }
    }
  }
}
