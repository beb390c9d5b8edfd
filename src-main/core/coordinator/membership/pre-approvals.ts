/**
 * Approvals by fingerprint made before the machine is listed (issue 26, item 6): a flood of strangers can keep the
 * awaiting list full, so a person approves the key their machine's agent prints, and that machine's next join is
 * admitted whether or not it was ever listed. Bounded (PRE_APPROVAL_BOUNDS.max, refused beyond), expiring
 * (ttlMs), one per node name (case-folded, trailing dots dropped), and kept in state.db like approvals are, so
 * a restart in between keeps it. A fingerprint lets in only the holder of that key: every join is signed by it.
 */
import { PRE_APPROVAL_BOUNDS, type PreApproval } from '../../../../src-shared/nodes/awaiting-machine';
import { nodeNameKey } from '../../../../src-shared/nodes/node-name-key';
import { ApiProblem } from '../common';

/** Where pre-approvals are kept across restarts (a key of the state database's kv table). */
export interface PreApprovalStore {
  load(): PreApproval[];
  save(all: PreApproval[]): void;
}

export class PreApprovals {
  private readonly byName = new Map<string, PreApproval>();
  private store: PreApprovalStore | null = null;

  constructor(private readonly bounds: { max: number; ttlMs: number } = PRE_APPROVAL_BOUNDS) {}

  /** Puts back what `store` kept (expired ones dropped at the next expire) and keeps every change there. */
  useStore(store: PreApprovalStore): void {
    for (const p of store.load()) this.byName.set(nodeNameKey(p.node), p);
    this.store = store;
  }

  /** Pre-approves `fingerprint` for `node`, replacing an earlier one for that name; 409 when the table is full. */
  add(node: string, fingerprint: string, now: number): PreApproval {
    this.expire(now);
    const key = nodeNameKey(node);
    if (!this.byName.has(key) && this.byName.size >= this.bounds.max) {
      throw new ApiProblem(409, `${this.byName.size} machines are already approved ahead of their first join, the most kept: remove one with \`gpu-share workers revoke NAME\`, or wait until one joins; ${node} was not pre-approved`);
    }
    const entry = { node, fingerprint, at: now, expiresAt: now + this.bounds.ttlMs };
    this.byName.delete(key);
    this.byName.set(key, entry);
    this.save();
    return { ...entry };
  }

  /** The pre-approval a join of `node` signed by a key of `fingerprint` meets now, if any. */
  match(node: string, fingerprint: string, now: number): PreApproval | null {
    const p = this.byName.get(nodeNameKey(node));
    return p && p.fingerprint === fingerprint && p.expiresAt > now ? { ...p } : null;
  }

  /** Drops the pre-approval of `node` (met by its join, or taken back); true when there was one. */
  remove(node: string): boolean {
    const gone = this.byName.delete(nodeNameKey(node));
    if (gone) this.save();
    return gone;
  }

  /** Drops the lapsed ones; true when one went. */
  expire(now: number): boolean {
    let gone = false;
    for (const [k, p] of this.byName) {
      if (p.expiresAt > now) continue;
      this.byName.delete(k);
      gone = true;
    }
    if (gone) this.save();
    return gone;
  }

  /** Every pre-approval, oldest first. */
  list(): PreApproval[] {
    return [...this.byName.values()].map((p) => ({ ...p }));
  }

  private save(): void {
    this.store?.save(this.list());
  }
}
