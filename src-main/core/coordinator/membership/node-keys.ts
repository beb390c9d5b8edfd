/**
 * Which Ed25519 key speaks for each node, and which machines are let in at all: a key is *approved* for a node
 * (kept in state.db, node-keys-repo.ts), and only a join signed by the approved key enters the pool. A signed
 * join with a key nobody approved is recorded as awaiting approval (awaiting-approval.ts: in memory, bounded) and
 * answered 202 — no worker id, no session, no run, no other member's address — until a person approves exactly
 * that key (`gpu-share workers approve NAME --key SHA256:…`, the Workers view's Approve). Approved by
 * construction: a join over loopback (the coordinator's own machine), every join under `serve --auto-approve`,
 * and machines this app starts over SSH (preApprove, with the key read over the verified SSH channel). A node
 * presenting another key than its approved one is held back the same way until `accept-key NAME --key …`
 * names exactly the new key. Pins from before approvals existed count as approved. A held-back key is transient:
 * memory only, forgotten HELD_BACK_TTL_MS after its last try (expire(), from the coordinator's tick), so a warning
 * goes once the process that presented it is gone. The name of the app's own worker (setOwnNode) is never held back:
 * another key under that name is another process borrowing this machine's name, refused with "pass --name".
 * A person may also approve a fingerprint before its machine is listed (pre-approvals.ts): a flood of strangers
 * filling the awaiting list cannot keep a machine out. Names are compared case-folded and without trailing dots
 * (`WK1` and `wk1.` are `wk1`); the spelling a machine sent is what is shown.
 */
import { createHash } from 'node:crypto';
import type { WorkerSnapshot } from '../../../../src-shared/training';
import type { AwaitingMachine, PreApproval } from '../../../../src-shared/nodes/awaiting-machine';
import { lookalikeNote, nodeNameKey, sameNodeName } from '../../../../src-shared/nodes/node-name-key';
import type { JoinAwaitingReply, JoinRequest } from '../../../../src-shared/worker-protocol';
import { ed25519Key, SignatureChecker, type RequestToCheck } from '../../api/request-signature';
import { sanitizeNodeName } from '../../../../src-shared/terminal-text';
import { ApiProblem } from '../common';
import { AwaitingApproval, type AwaitingEntry, type AwaitingRecord } from './awaiting-approval';
import { PreApprovals, type PreApprovalStore } from './pre-approvals';
import { isLoopbackAddress, type ConnectionFacts } from './worker-gate';

export interface NodeKeyRecord {
  node: string;
  /** Raw Ed25519 public key, base64url: the approved one. */
  publicKey: string;
  pinnedAt: number;
  /** A new key the node presented (with a valid signature by it), held back for the person's yes (memory only). */
  pending: { publicKey: string; at: number } | null;
}

/** Where approvals are kept across restarts (the state database's node_keys table). */
export interface NodeKeyStore {
  list(): NodeKeyRecord[];
  save(record: NodeKeyRecord): void;
  remove(node: string): void;
}

/** SHA256:<base64 without padding> of a raw public key, as OpenSSH prints key fingerprints. */
export function fingerprintOf(publicKeyBase64url: string): string {
  return `SHA256:${createHash('sha256').update(Buffer.from(publicKeyBase64url, 'base64url')).digest('base64').replace(/=+$/, '')}`;
}

/** How long an awaiting agent waits before asking again. */
export const AWAITING_RETRY_AFTER_MS = 3000;

/** How long a held-back key stays listed after its last try: the agent that presented it exits at the 409. */
export const HELD_BACK_TTL_MS = 10 * 60_000;

export interface NodeKeysOptions {
  now: () => number;
  checker?: SignatureChecker;
  /** Machines awaiting approval kept at most (default MAX_AWAITING). */
  maxAwaiting?: number;
  /** Told once per new held-back key (an approved node presenting another key), for the events feed. */
  onKeyConflict?: (message: string) => void;
}

/** What approve() did: approved a listed key (or one given whole), or kept a pre-approval its next join meets. */
export type ApproveOutcome = { kind: 'approved'; record: NodeKeyRecord } | { kind: 'pre-approved'; preApproval: PreApproval; message: string };

/** How long a machine refused a place on a full awaiting list is asked to wait before it asks again. */
export const AWAITING_FULL_RETRY_S = 10;

/** What a join's key check decided: admit it (pinning `pin` once the join succeeds), or answer 202. */
export type JoinAdmission = { admit: true; pin: string | null } | { admit: false; awaiting: JoinAwaitingReply };

type Stored = Omit<NodeKeyRecord, 'pending'>;

export class NodeKeys {
  private readonly records = new Map<string, Stored>();
  private readonly listeners = new Set<() => void>();
  private readonly revokeListeners = new Set<(node: string) => void>();
  private readonly checker: SignatureChecker;
  private readonly awaiting: AwaitingApproval;
  private readonly pre = new PreApprovals();
  private store: NodeKeyStore | null = null;
  private autoApprove = false;
  private ownNode: string | null = null;
  /** The last key refused under the own worker's name (one event per key, not per try). */
  private lastOwnNameKey: string | null = null;

  constructor(private readonly opts: NodeKeysOptions) {
    this.checker = opts.checker ?? new SignatureChecker({ now: opts.now });
    this.awaiting = new AwaitingApproval({ max: opts.maxAwaiting, onEvict: (key) => this.forgetNonces(key) });
  }

  /** Puts back the approvals `store` kept and keeps every later change there (call before the API serves). */
  useStore(store: NodeKeyStore): void {
    for (const r of this.records.values()) store.save({ ...r, pending: null });
    for (const r of store.list()) this.records.set(nodeNameKey(r.node), { node: r.node, publicKey: r.publicKey, pinnedAt: r.pinnedAt });
    this.store = store;
    this.changed();
  }

  /** Puts back the pre-approvals `store` kept and keeps every later change there. */
  usePreApprovalStore(store: PreApprovalStore): void {
    this.pre.useStore(store);
    this.changed();
  }

  /** `serve --auto-approve`: every signed join is approved (closed labs only: any join-token holder then trains). */
  setAutoApprove(on: boolean): void {
    this.autoApprove = on;
  }

  get autoApproves(): boolean {
    return this.autoApprove;
  }

  /** The name of the app's own worker (this machine's): another key under it is refused, never held back. */
  setOwnNode(node: string | null): void {
    this.ownNode = node;
    if (node !== null && this.awaiting.forgetNode(node) > 0) this.changed();
  }

  /** Forgets held-back keys not presented for HELD_BACK_TTL_MS, machines that stopped asking, lapsed pre-approvals; true when one went. */
  expire(): boolean {
    const now = this.opts.now();
    const cutoff = now - HELD_BACK_TTL_MS;
    const gone = this.awaiting.forgetWhere((e) => e.heldBackFrom !== undefined && e.lastSeen < cutoff) + this.awaiting.expire(now) + (this.pre.expire(now) ? 1 : 0);
    if (gone > 0) this.changed();
    return gone > 0;
  }

  /**
   * Checks a join's key before the coordinator admits it. Throws 400 for a malformed key, 401 for a bad or missing
   * signature, 403 for an unsigned join from another machine, 409 when an approved node presents another key.
   */
  checkJoin(join: Pick<JoinRequest, 'node' | 'publicKey' | 'gpus' | 'cpuCores' | 'ramMb' | 'python'>, conn: ConnectionFacts, request: RequestToCheck): JoinAdmission {
    const { node, publicKey: presentedKey } = join;
    const record = this.records.get(nodeNameKey(node));
    if (presentedKey !== undefined && !ed25519Key(presentedKey)) throw new ApiProblem(400, `the publicKey ${node} sent is not an Ed25519 public key`);
    if (record && record.node !== node) {
      throw new ApiProblem(409, `the node name ${lookalikeNote(node, record.node)}, which is approved with key ${fingerprintOf(record.publicKey)}: start this worker with --name ${record.node} if it is that machine, or with another name`);
    }
    const loopback = isLoopbackAddress(conn.seenFrom);
    if (presentedKey === undefined) {
      if (record) this.checker.check(request, record.publicKey, node); // refuses: the node's key must sign
      if (!loopback) throw new ApiProblem(403, `${node} sent an unsigned join: update the agent: joins must be signed (an agent of this version signs every request with its node key)`);
      return { admit: true, pin: null }; // an older agent on this very machine
    }
    // Only a key that signed this very join is recorded anywhere: nobody can park a key they do not hold.
    this.checker.check(request, presentedKey, node);
    const now = this.opts.now();
    if (record && presentedKey !== record.publicKey && this.ownNode !== null && sameNodeName(node, this.ownNode)) {
      // Said once per key in the events feed: the process exits at the 409, a person may paste the command again.
      if (this.lastOwnNameKey !== presentedKey) {
        this.lastOwnNameKey = presentedKey;
        this.opts.onKeyConflict?.(
          `A worker${conn.seenFrom ? ` at ${conn.seenFrom}` : ''} tried to join as ${node}, this machine's own worker's name, with another key (${fingerprintOf(presentedKey)}): refused; it must be started with another --name`,
        );
      }
      throw new ApiProblem(
        409,
        `the name ${node} belongs to this machine's own worker (the one the app runs, key ${fingerprintOf(record.publicKey)}); ` +
          `this is another worker process (key ${fingerprintOf(presentedKey)}): start it with another name, e.g. --name ${node}-2`,
      );
    }
    if (record && presentedKey !== record.publicKey) {
      // Only a new entry is news: a waiting agent asks again every few seconds.
      if (this.listed(join, this.awaiting.record({ ...this.entryOf(join, presentedKey, conn, now), heldBackFrom: fingerprintOf(record.publicKey) }))) {
        this.changed();
        this.opts.onKeyConflict?.(
          `Node ${node} presented a new key ${fingerprintOf(presentedKey)}${conn.seenFrom ? ` from ${conn.seenFrom}` : ''} (pinned: ${fingerprintOf(record.publicKey)}): held back until it is accepted in the Workers view`,
        );
      }
      throw new ApiProblem(
        409,
        `node ${node} presents a new key (fingerprint ${fingerprintOf(presentedKey)}; the pinned one is ${fingerprintOf(record.publicKey)}); ` +
          `accept it in the Workers view or with \`gpu-share workers accept-key ${node} --key ${fingerprintOf(presentedKey)}\``,
      );
    }
    if (record) return { admit: true, pin: null };
    if (loopback || this.autoApprove) return { admit: true, pin: presentedKey };
    // Approved by its fingerprint before it was listed: pinned (and the pre-approval spent) once the join succeeds.
    if (this.pre.match(node, fingerprintOf(presentedKey), now)) return { admit: true, pin: presentedKey };
    if (this.listed(join, this.awaiting.record(this.entryOf(join, presentedKey, conn, now)))) this.changed();
    return { admit: false, awaiting: { status: 'awaiting-approval', node, fingerprint: fingerprintOf(presentedKey), retryAfterMs: AWAITING_RETRY_AFTER_MS } };
  }

  /** Approves `publicKey` for a node that has none yet (after its first join was admitted by loopback or auto-approve). */
  pin(node: string, publicKey: string): void {
    if (this.records.has(nodeNameKey(node))) return;
    this.setApproved(node, publicKey);
  }

  /**
   * Approves `publicKey` for `node` without a join first, replacing any key approved before: the app started that
   * machine over SSH and read its key over the verified channel, or it is the app's own worker.
   */
  preApprove(node: string, publicKey: string): void {
    if (!ed25519Key(publicKey)) throw new ApiProblem(400, `the key given for ${node} is not an Ed25519 public key`);
    if (this.records.get(nodeNameKey(node))?.publicKey === publicKey) return;
    this.setApproved(node, publicKey);
  }

  /** Throws 401 unless a worker request of `node` is signed by its approved key; requests of unsigned nodes pass. */
  checkRequest(node: string, request: RequestToCheck): void {
    const record = this.records.get(nodeNameKey(node));
    if (record) this.checker.check(request, record.publicKey, node);
  }

  /**
   * The person approved the machine `node` with exactly the key `fingerprint`; its next join is admitted, whether
   * it is listed as awaiting now or not (then a pre-approval its join meets). With `publicKey` (read by the
   * operator over SSH before the agent joined): that key, which must match `fingerprint`.
   */
  approve(node: string, fingerprint: string, publicKey?: string): ApproveOutcome {
    if (publicKey !== undefined) {
      if (!ed25519Key(publicKey) || fingerprintOf(publicKey) !== fingerprint) throw new ApiProblem(400, `the key given for ${node} has fingerprint ${ed25519Key(publicKey) ? fingerprintOf(publicKey) : '(not an Ed25519 key)'}, not ${fingerprint}: nothing was approved`);
      this.preApprove(node, publicKey);
      return { kind: 'approved', record: this.get(node)! };
    }
    const record = this.records.get(nodeNameKey(node));
    const entries = this.awaiting.ofNode(node);
    if (record) {
      if (fingerprintOf(record.publicKey) === fingerprint) return { kind: 'approved', record: this.get(node)! };
      const held = entries.find((e) => e.heldBackFrom && e.fingerprint === fingerprint);
      if (held) throw new ApiProblem(409, `${node} is already approved with key ${fingerprintOf(record.publicKey)}; to replace it by ${fingerprint}, use \`gpu-share workers accept-key ${node} --key ${fingerprint}\``);
      throw new ApiProblem(409, `${node} is already approved with key ${fingerprintOf(record.publicKey)}, not ${fingerprint}; revoke it first (\`gpu-share workers revoke ${node}\`) to approve another key`);
    }
    const candidates = entries.filter((e) => !e.heldBackFrom);
    const match = candidates.find((e) => e.fingerprint === fingerprint);
    if (match) {
      this.setApproved(match.node, match.publicKey); // which forgets the node's awaiting entries
      return { kind: 'approved', record: this.get(node)! };
    }
    const preApproval = this.pre.add(node, fingerprint, this.opts.now());
    this.changed();
    const listed = candidates.length === 0 ? `no machine named ${node} awaits approval now` : `${mismatch(node, 'awaiting approval', candidates, fingerprint).split(': nothing')[0]} (those stay unapproved)`;
    const until = new Date(preApproval.expiresAt).toISOString().replace(/\.\d+Z$/, 'Z');
    return { kind: 'pre-approved', preApproval, message: `Pre-approved ${node} with key ${fingerprint} until ${until}: ${listed}; its next join signed by exactly this key is admitted.` };
  }

  /** The person accepted exactly the held-back key `fingerprint` of `node`: it is approved, the old one no longer speaks for the node. */
  accept(node: string, fingerprint: string): NodeKeyRecord {
    const record = this.records.get(nodeNameKey(node));
    const held = this.awaiting.ofNode(node).filter((e) => e.heldBackFrom);
    if (!record) {
      const waiting = this.awaiting.ofNode(node).length > 0;
      throw new ApiProblem(404, waiting ? `${node} has no approved key yet: approve it with \`gpu-share workers approve ${node} --key SHA256:…\`` : `no node named ${node} has joined with a key`);
    }
    if (held.length === 0) {
      throw new ApiProblem(
        404,
        `node ${node} has no new key waiting to be accepted (its key is ${fingerprintOf(record.publicKey)}); a held-back key is forgotten ${HELD_BACK_TTL_MS / 60_000} minutes after its last try: start that machine's worker again, then accept its key`,
      );
    }
    const match = held.find((e) => e.fingerprint === fingerprint);
    if (!match) throw new ApiProblem(409, mismatch(node, 'held back', held, fingerprint));
    this.setApproved(record.node, match.publicKey);
    return this.get(node)!;
  }

  /** Takes back the approval of `node` (or its pre-approval): removed from state.db, its session ends (onRevoke), its next join awaits again. */
  revoke(node: string): void {
    const record = this.records.get(nodeNameKey(node));
    if (!record && this.pre.remove(node)) return this.changed();
    if (!record) throw new ApiProblem(404, `no node named ${node} is approved or pre-approved (see \`gpu-share workers list\`)`);
    node = record.node;
    this.records.delete(nodeNameKey(node));
    this.awaiting.forgetNode(node);
    this.store?.remove(node);
    for (const l of this.revokeListeners) l(node);
    this.changed();
  }

  /** True when `publicKey` is the key approved for `node`. */
  isApproved(node: string, publicKey: string): boolean {
    return this.records.get(nodeNameKey(node))?.publicKey === publicKey;
  }

  /** Whether `publicKey` is awaiting approval (or held back) for some node now. */
  isAwaiting(publicKey: string): boolean {
    return this.awaiting.hasKey(publicKey);
  }

  /** The approval record of a node (with the newest key held back for it, if any), or null when none is approved. */
  get(node: string): NodeKeyRecord | null {
    const r = this.records.get(nodeNameKey(node));
    if (!r) return null;
    const held = this.heldBack(node);
    return { ...r, pending: held ? { publicKey: held.publicKey, at: held.lastSeen } : null };
  }

  /** Machines awaiting approval or held back, oldest first. */
  awaitingList(): AwaitingMachine[] {
    return this.awaiting.list();
  }

  /** Fingerprints approved ahead of their machine's first join, oldest first. */
  preApprovals(): PreApproval[] {
    return this.pre.list();
  }

  /** Worker snapshots with their node's key fingerprint and, when one waits, the held-back key. */
  annotate(workers: WorkerSnapshot[]): WorkerSnapshot[] {
    return workers.map((w) => {
      const r = this.records.get(nodeNameKey(w.node));
      if (!r) return w;
      const held = this.heldBack(w.node);
      return { ...w, keyFingerprint: fingerprintOf(r.publicKey), ...(held ? { keyHeldBack: { fingerprint: held.fingerprint, since: held.firstSeen } } : {}) };
    });
  }

  /** Called after every approval, awaiting machine, held-back key and revocation; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Told the node whose approval was revoked (the coordinator ends its session); returns the unsubscribe. */
  onRevoke(listener: (node: string) => void): () => void {
    this.revokeListeners.add(listener);
    return () => this.revokeListeners.delete(listener);
  }

  private setApproved(node: string, publicKey: string): void {
    const record: Stored = { node, publicKey, pinnedAt: this.opts.now() };
    const old = this.records.get(nodeNameKey(node));
    if (old && old.node !== node) this.store?.remove(old.node);
    this.records.set(nodeNameKey(node), record);
    this.awaiting.forgetNode(node);
    this.pre.remove(node);
    this.store?.save({ ...record, pending: null });
    this.changed();
  }

  /** True when the join's entry is new (the pages are told); throws 409 for a lookalike name and 429 when a bound refuses it. */
  private listed(join: Pick<JoinRequest, 'node' | 'publicKey'>, result: AwaitingRecord): boolean {
    if (result.kind !== 'refused') return result.kind === 'new';
    const fingerprint = fingerprintOf(join.publicKey!);
    if (result.lookalike) throw new ApiProblem(409, `the node name ${result.why}: start this worker with another --name`);
    throw new ApiProblem(
      429,
      `${result.why}, so ${join.node} (key ${fingerprint}) is not listed; a machine already listed is never pushed out. ` +
        `A person can approve it by its key now, listed or not: \`gpu-share workers approve ${join.node} --key ${fingerprint}\` (its next join is then admitted); asking again in ${AWAITING_FULL_RETRY_S} s`,
      AWAITING_FULL_RETRY_S,
    );
  }

  private heldBack(node: string): AwaitingEntry | undefined {
    return this.awaiting.ofNode(node).filter((e) => e.heldBackFrom).at(-1);
  }

  private entryOf(join: Pick<JoinRequest, 'node' | 'gpus' | 'cpuCores' | 'ramMb' | 'python'>, publicKey: string, conn: ConnectionFacts, now: number): AwaitingEntry {
    return {
      node: join.node,
      publicKey,
      fingerprint: fingerprintOf(publicKey),
      address: conn.seenFrom,
      hardware: { gpus: join.gpus.slice(0, 16).map((g) => ({ name: sanitizeNodeName(g.name).slice(0, 100), vramTotalMb: g.vramTotalMb })), cpuCores: join.cpuCores, ramMb: join.ramMb, torch: join.python ? sanitizeNodeName(join.python.torchVersion).slice(0, 50) : null },
      firstSeen: now,
      lastSeen: now,
    };
  }

  private forgetNonces(publicKey: string): void {
    if ([...this.records.values()].some((r) => r.publicKey === publicKey)) return;
    this.checker.forgetKey(publicKey);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}

function mismatch(node: string, what: string, entries: AwaitingEntry[], given: string): string {
  const seen = entries.map((e) => `${e.fingerprint} (from ${e.address ?? 'an unknown address'})`).join(', ');
  return `the key ${what} for ${node} is ${seen}, not ${given}: nothing was approved. Compare the fingerprint the machine's agent prints and give exactly that one`;
}
