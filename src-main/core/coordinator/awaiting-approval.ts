/**
 * Machines whose node key nobody approved yet, kept in memory only and bounded: a flood of signed joins under
 * fresh names and keys can cost at most MAX_AWAITING entries, the oldest forgotten first (its key and name are
 * then unknown again), and nothing of a machine never approved reaches state.db or the name bindings. One entry
 * per (node, key): a re-join with the same key refreshes its entry, and a second key for the same name is a
 * second entry, so nobody can swap the key a person is looking at before they approve it.
 */
import { MAX_AWAITING, type AwaitingMachine } from '../../../src-shared/nodes/awaiting-machine';

export interface AwaitingEntry extends AwaitingMachine {
  /** Raw Ed25519 public key, base64url. */
  publicKey: string;
}

export class AwaitingApproval {
  /** Insertion order is age order: a refreshed entry moves to the end. */
  private readonly entries = new Map<string, AwaitingEntry>();

  constructor(
    private readonly opts: {
      max?: number;
      /** Told the key of each entry forgotten for room (the nonce cache forgets it too). */
      onEvict?: (publicKey: string) => void;
    } = {},
  ) {}

  /** Records or refreshes the entry of `entry.node` with `entry.publicKey`; true when it is new. */
  record(entry: Omit<AwaitingEntry, 'firstSeen'> & { firstSeen?: number }): boolean {
    const key = keyOf(entry.node, entry.publicKey);
    const old = this.entries.get(key);
    this.entries.delete(key);
    this.entries.set(key, { ...entry, firstSeen: old?.firstSeen ?? entry.firstSeen ?? entry.lastSeen });
    const max = this.opts.max ?? MAX_AWAITING;
    while (this.entries.size > max) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, AwaitingEntry];
      this.entries.delete(oldestKey);
      if (![...this.entries.values()].some((e) => e.publicKey === oldest.publicKey)) this.opts.onEvict?.(oldest.publicKey);
    }
    return old === undefined;
  }

  /** The entries of one node (several when it joined with several keys), newest last. */
  ofNode(node: string): AwaitingEntry[] {
    return [...this.entries.values()].filter((e) => e.node === node);
  }

  /** Whether `publicKey` is awaiting approval (for any node). */
  hasKey(publicKey: string): boolean {
    for (const e of this.entries.values()) if (e.publicKey === publicKey) return true;
    return false;
  }

  /** Forgets every entry of `node`; returns how many there were. */
  forgetNode(node: string): number {
    let n = 0;
    for (const [k, e] of this.entries) {
      if (e.node !== node) continue;
      this.entries.delete(k);
      n += 1;
    }
    return n;
  }

  /** Forgets every entry `drop` picks; returns how many there were. */
  forgetWhere(drop: (entry: AwaitingEntry) => boolean): number {
    let n = 0;
    for (const [k, e] of this.entries) {
      if (!drop(e)) continue;
      this.entries.delete(k);
      if (![...this.entries.values()].some((o) => o.publicKey === e.publicKey)) this.opts.onEvict?.(e.publicKey);
      n += 1;
    }
    return n;
  }

  /** Every entry, oldest first, without the raw keys. */
  list(): AwaitingMachine[] {
    return [...this.entries.values()].map(({ publicKey: _key, ...rest }) => ({ ...rest, hardware: { ...rest.hardware, gpus: rest.hardware.gpus.map((g) => ({ ...g })) } }));
  }

  get size(): number {
    return this.entries.size;
  }
}

function keyOf(node: string, publicKey: string): string {
  return `${node}\n${publicKey}`;
}
