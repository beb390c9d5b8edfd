/**
 * Machines whose node key nobody approved yet, kept in memory only and bounded (issue 14, item 5; issue 26,
 * item 6): a flood of signed joins under fresh names and keys can cost at most AWAITING_BOUNDS.total entries,
 * AWAITING_BOUNDS.perAddress of them from one address and AWAITING_BOUNDS.perSubnet from one /24 (IPv6: its /64).
 * A full list refuses the newcomer — it never pushes out a machine already listed, so the one a person is looking
 * at stays listed however many strangers join; an entry goes only when its agent stopped asking (ttlMs after its
 * last try), is approved, or its node is revoked. Nothing of a machine never approved reaches state.db or the
 * name bindings. One entry per (node, key): a re-join with the same key refreshes it, and a second key for the
 * same name is a second entry, so nobody can swap the key a person is looking at before they approve it. Names are
 * compared case-folded and without trailing dots: `WK1` does not await beside `wk1` (node-name-key.ts).
 */
import { MAX_AWAITING, type AwaitingMachine } from '../../../../src-shared/nodes/awaiting-machine';
import { lookalikeNote, nodeNameKey } from '../../../../src-shared/nodes/node-name-key';
import { addressKey, networkKey } from '../../../platform/net/address-key';

export interface AwaitingEntry extends AwaitingMachine {
  /** Raw Ed25519 public key, base64url. */
  publicKey: string;
}

/** How many machines may await approval: in all, from one address, from one /24; and how long one is kept after its last try. */
export const AWAITING_BOUNDS = { total: MAX_AWAITING, perAddress: 2, perSubnet: 16, ttlMs: 2 * 60_000 } as const;

/** What record() did: listed a new entry, refreshed one, or refused the newcomer (why: a sentence naming the bound). */
export type AwaitingRecord = { kind: 'new' } | { kind: 'seen' } | { kind: 'refused'; why: string; lookalike: boolean };

export class AwaitingApproval {
  /** Insertion order is age order (first seen); a refresh keeps an entry's place. */
  private readonly entries = new Map<string, AwaitingEntry>();
  private readonly bounds: { total: number; perAddress: number; perSubnet: number; ttlMs: number };

  constructor(
    private readonly opts: {
      max?: number;
      bounds?: Partial<typeof AWAITING_BOUNDS>;
      /** Told the key of each entry forgotten (the nonce cache forgets it too). */
      onEvict?: (publicKey: string) => void;
    } = {},
  ) {
    this.bounds = { ...AWAITING_BOUNDS, ...(opts.max !== undefined ? { total: opts.max } : {}), ...opts.bounds };
  }

  /** Records or refreshes the entry of `entry.node` with `entry.publicKey`, unless a bound refuses a new one. */
  record(entry: Omit<AwaitingEntry, 'firstSeen'> & { firstSeen?: number }): AwaitingRecord {
    const key = keyOf(entry.node, entry.publicKey);
    const old = this.entries.get(key);
    if (old) {
      this.entries.set(key, { ...entry, firstSeen: old.firstSeen });
      return { kind: 'seen' };
    }
    this.forgetWhere((e) => e.heldBackFrom === undefined && e.lastSeen < entry.lastSeen - this.bounds.ttlMs);
    const refused = this.refusal(entry);
    if (refused) return refused;
    this.entries.set(key, { ...entry, firstSeen: entry.firstSeen ?? entry.lastSeen });
    return { kind: 'new' };
  }

  /** The entries of one node, however spelled (several when it joined with several keys), oldest first. */
  ofNode(node: string): AwaitingEntry[] {
    const want = nodeNameKey(node);
    return [...this.entries.values()].filter((e) => nodeNameKey(e.node) === want);
  }

  /** Whether `publicKey` is awaiting approval (for any node). */
  hasKey(publicKey: string): boolean {
    for (const e of this.entries.values()) if (e.publicKey === publicKey) return true;
    return false;
  }

  /** Forgets every entry of `node`, however spelled; returns how many there were. */
  forgetNode(node: string): number {
    const want = nodeNameKey(node);
    let n = 0;
    for (const [k, e] of this.entries) {
      if (nodeNameKey(e.node) !== want) continue;
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

  /** Forgets machines awaiting approval whose agent stopped asking ttlMs ago (held-back keys have their own time). */
  expire(now: number): number {
    return this.forgetWhere((e) => e.heldBackFrom === undefined && e.lastSeen < now - this.bounds.ttlMs);
  }

  /** Every entry, oldest first, without the raw keys. */
  list(): AwaitingMachine[] {
    return [...this.entries.values()].map(({ publicKey: _key, ...rest }) => ({ ...rest, hardware: { ...rest.hardware, gpus: rest.hardware.gpus.map((g) => ({ ...g })) } }));
  }

  get size(): number {
    return this.entries.size;
  }

  /** Why a new entry cannot be listed now, or null when it can. */
  private refusal(entry: Pick<AwaitingEntry, 'node' | 'address'>): AwaitingRecord | null {
    const want = nodeNameKey(entry.node);
    const twin = [...this.entries.values()].find((e) => nodeNameKey(e.node) === want && e.node !== entry.node);
    if (twin) {
      return { kind: 'refused', lookalike: true, why: `${lookalikeNote(entry.node, twin.node)}, which already awaits approval (from ${twin.address ?? 'an unknown address'})` };
    }
    const all = [...this.entries.values()];
    const refuse = (why: string): AwaitingRecord => ({ kind: 'refused', lookalike: false, why });
    if (all.length >= this.bounds.total) return refuse(`${all.length} machines already await approval, the most this coordinator lists`);
    if (entry.address === null) return null;
    const address = addressKey(entry.address);
    if (all.filter((e) => e.address !== null && addressKey(e.address) === address).length >= this.bounds.perAddress) {
      return refuse(`${this.bounds.perAddress} machines from ${entry.address} already await approval, the most from one address`);
    }
    const subnet = networkKey(entry.address);
    if (all.filter((e) => e.address !== null && networkKey(e.address) === subnet).length >= this.bounds.perSubnet) {
      return refuse(`${this.bounds.perSubnet} machines from ${subnet} already await approval, the most from one network`);
    }
    return null;
  }
}

function keyOf(node: string, publicKey: string): string {
  return `${node}\n${publicKey}`;
}
