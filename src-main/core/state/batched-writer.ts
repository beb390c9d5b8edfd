/**
 * The one path every write to the state database takes, in two kinds:
 *
 * - `writeNow(fn)`: acknowledged state (runs, generations, events, the worker registry, counters). `fn` runs in
 *   its own transaction and is committed before writeNow returns, so once the caller goes on (tells a worker,
 *   shows the page), a SIGKILL cannot take it back. Whatever was batched before is written first, so the file
 *   always reflects the order of the calls.
 * - batched (`queued(bytes)` from a PendingSource): frequent and cheap-to-lose writes (output tail, heartbeat
 *   times, run progress, loss points). They wait in memory and are written in one transaction every `flushMs`,
 *   when `maxBytes` have piled up, before the next acknowledged write, before any read, and on close. A SIGKILL
 *   loses at most the last `flushMs` of them.
 *
 * better-sqlite3 is synchronous: a write blocks the event loop for its duration, which batching keeps short.
 */
import type { Database } from 'better-sqlite3';

/** A repository's queue of batched writes. */
export interface PendingSource {
  /** Whether anything is waiting. */
  hasPending(): boolean;
  /** Writes everything waiting and forgets it; runs inside the writer's transaction. */
  flushPending(): void;
}

export interface BatchOptions {
  /** Longest a batched write waits (default 250 ms). */
  flushMs?: number;
  /** Flush at once when this many bytes are waiting (default 256 KiB). */
  maxBytes?: number;
  /** Told when a timed flush fails (the batch is dropped: memory stays bounded). Default: console.warn. */
  onError?: (error: unknown) => void;
}

export class BatchedWriter {
  private readonly sources: PendingSource[] = [];
  private readonly flushMs: number;
  private readonly maxBytes: number;
  private readonly onError: (error: unknown) => void;
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly db: Database,
    opts: BatchOptions = {},
  ) {
    this.flushMs = opts.flushMs ?? 250;
    this.maxBytes = opts.maxBytes ?? 256 * 1024;
    this.onError = opts.onError ?? ((error) => console.warn(`gpu-share: could not write batched state: ${error instanceof Error ? error.message : String(error)}`));
  }

  register(source: PendingSource): void {
    this.sources.push(source);
  }

  /** A source queued about `bytes` more: flushes now past maxBytes, else within flushMs. */
  queued(bytes: number): void {
    if (this.closed) throw new Error('the state database is closed');
    this.pendingBytes += bytes;
    if (this.pendingBytes >= this.maxBytes) {
      this.flushReportingErrors();
      return;
    }
    if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flushReportingErrors();
      }, this.flushMs);
      this.timer.unref();
    }
  }

  /** Writes everything batched, in one transaction. */
  flush(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.pendingBytes = 0;
    const waiting = this.sources.filter((s) => s.hasPending());
    if (waiting.length === 0) return;
    this.db.transaction(() => {
      for (const source of waiting) source.flushPending();
    }).immediate();
  }

  /** Acknowledged write: batched writes first, then `fn` in its own transaction, committed on return. */
  writeNow<T>(fn: () => T): T {
    if (this.closed) throw new Error('the state database is closed');
    this.flush();
    return this.db.transaction(fn).immediate();
  }

  /** Reads see every write made before them, batched ones included. */
  read<T>(fn: () => T): T {
    if (this.closed) throw new Error('the state database is closed');
    this.flush();
    return fn();
  }

  /** Final flush; later writes throw. */
  close(): void {
    if (this.closed) return;
    try {
      this.flush();
    } finally {
      this.closed = true;
    }
  }

  private flushReportingErrors(): void {
    try {
      this.flush();
    } catch (error) {
      this.onError(error);
    }
  }
}
