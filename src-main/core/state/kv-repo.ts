/**
 * Counters and settings: a small key → JSON table. Counters are what must never go backwards across a
 * restart (worker ids are never reused, run ids carry a sequence number); all writes here are acknowledged.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { BatchedWriter } from './batched-writer';

/** Counter names the coordinator keeps. */
export const COUNTERS = {
  workerId: 'counter:workerId',
  runSeq: 'counter:runSeq',
  eventSeq: 'counter:eventSeq',
} as const;

export class KvRepo {
  private readonly getStmt: Statement<[string], { value: string }>;
  private readonly setStmt: Statement<[string, string]>;
  private readonly deleteStmt: Statement<[string]>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
  ) {
    this.getStmt = db.prepare('SELECT value FROM kv WHERE key = ?');
    this.setStmt = db.prepare('INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
    this.deleteStmt = db.prepare('DELETE FROM kv WHERE key = ?');
  }

  get<T>(key: string): T | undefined {
    const row = this.writer.read(() => this.getStmt.get(key));
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  /** Stores any JSON value (undefined is refused: use delete). */
  set(key: string, value: unknown): void {
    if (value === undefined) throw new Error(`kv.set("${key}", undefined): use kv.delete to remove a key`);
    const text = JSON.stringify(value);
    this.writer.writeNow(() => this.setStmt.run(key, text));
  }

  delete(key: string): void {
    this.writer.writeNow(() => this.deleteStmt.run(key));
  }

  /** The counter's current value (0 before its first use). */
  counter(name: string): number {
    return this.get<number>(name) ?? 0;
  }

  /** Adds one and returns the new value (1 the first time); acknowledged before it returns. */
  next(name: string): number {
    return this.writer.writeNow(() => {
      const value = (this.readNumber(name) ?? 0) + 1;
      this.setStmt.run(name, JSON.stringify(value));
      return value;
    });
  }

  /** Raises the counter to at least `value` (never lowers it); returns the value it holds. */
  raise(name: string, value: number): number {
    return this.writer.writeNow(() => {
      const current = this.readNumber(name) ?? 0;
      if (value <= current) return current;
      this.setStmt.run(name, JSON.stringify(value));
      return value;
    });
  }

  private readNumber(name: string): number | undefined {
    const row = this.getStmt.get(name);
    return row ? (JSON.parse(row.value) as number) : undefined;
  }
}
