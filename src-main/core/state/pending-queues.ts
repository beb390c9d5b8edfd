/**
 * The two shapes a repository's batched writes take: a list written in arrival order (output chunks, loss
 * points) and a map where the latest value per key is all that matters (heartbeat times, progress). Both
 * register with the BatchedWriter and hand their batch to `write` inside its transaction.
 */
import type { BatchedWriter, PendingSource } from './batched-writer';

export class PendingList<T> implements PendingSource {
  private items: T[] = [];

  constructor(
    private readonly writer: BatchedWriter,
    private readonly write: (batch: T[]) => void,
  ) {
    writer.register(this);
  }

  /** Queues an item that costs about `bytes` to hold. */
  push(item: T, bytes: number): void {
    this.items.push(item);
    this.writer.queued(bytes);
  }

  /** The item queued last, to extend in place (counting `bytes` more), or undefined. */
  last(): T | undefined {
    return this.items.at(-1);
  }

  grew(bytes: number): void {
    this.writer.queued(bytes);
  }

  hasPending(): boolean {
    return this.items.length > 0;
  }

  flushPending(): void {
    const batch = this.items;
    this.items = [];
    this.write(batch);
  }
}

export class PendingMap<K, V> implements PendingSource {
  private readonly entries = new Map<K, V>();

  constructor(
    private readonly writer: BatchedWriter,
    private readonly write: (batch: [K, V][]) => void,
  ) {
    writer.register(this);
  }

  /** Queues the value for `key`, replacing one still waiting. */
  set(key: K, value: V, bytes: number): void {
    this.entries.set(key, value);
    this.writer.queued(bytes);
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  hasPending(): boolean {
    return this.entries.size > 0;
  }

  flushPending(): void {
    const batch = [...this.entries];
    this.entries.clear();
    this.write(batch);
  }
}
