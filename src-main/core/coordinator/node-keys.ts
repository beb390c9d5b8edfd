/**
 * Which Ed25519 key speaks for each node: pinned at the node's first signed join (trust on first use, as SSH
 * does with host keys), then required on every later join and worker request. A join that presents a different
 * key — a reinstalled machine, or someone else — is held back until the person accepts the new key in the
 * Workers view or with `gpu-share workers accept-key NAME`. Nodes of older agents, which send no key, stay
 * unsigned (the Workers view says so). Pins and held-back keys are kept in state.db (node-keys-repo.ts).
 */
import { createHash } from 'node:crypto';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { ed25519Key, SignatureChecker, type RequestToCheck } from '../api/request-signature';
import { ApiProblem } from './api-problem';

export interface NodeKeyRecord {
  node: string;
  /** Raw Ed25519 public key, base64url. */
  publicKey: string;
  pinnedAt: number;
  /** A new key the node presented (with a valid signature by it), waiting for the person's yes. */
  pending: { publicKey: string; at: number } | null;
}

/** Where pins are kept across restarts (the state database's node_keys table). */
export interface NodeKeyStore {
  list(): NodeKeyRecord[];
  save(record: NodeKeyRecord): void;
}

/** SHA256:<base64 without padding> of a raw public key, as OpenSSH prints key fingerprints. */
export function fingerprintOf(publicKeyBase64url: string): string {
  return `SHA256:${createHash('sha256').update(Buffer.from(publicKeyBase64url, 'base64url')).digest('base64').replace(/=+$/, '')}`;
}

export interface NodeKeysOptions {
  now: () => number;
  checker?: SignatureChecker;
}

export class NodeKeys {
  private readonly records = new Map<string, NodeKeyRecord>();
  private readonly listeners = new Set<() => void>();
  private readonly checker: SignatureChecker;
  private store: NodeKeyStore | null = null;

  constructor(private readonly opts: NodeKeysOptions) {
    this.checker = opts.checker ?? new SignatureChecker({ now: opts.now });
  }

  /** Puts back the pins `store` kept and keeps every later change there (call before the API serves). */
  useStore(store: NodeKeyStore): void {
    for (const r of this.records.values()) store.save(r);
    for (const r of store.list()) this.records.set(r.node, r);
    this.store = store;
    this.changed();
  }

  /**
   * Checks a join before the coordinator admits it; returns the key to pin once the join succeeds (a first signed
   * join), else null. Throws 401 for a bad or missing signature, 409 when the node presents a new key (held back).
   */
  checkJoin(node: string, presentedKey: string | undefined, request: RequestToCheck): string | null {
    const record = this.records.get(node);
    if (presentedKey !== undefined && !ed25519Key(presentedKey)) throw new ApiProblem(400, `the publicKey ${node} sent is not an Ed25519 public key`);
    if (!record) {
      if (presentedKey === undefined) return null; // an older agent: joins unsigned, shown as such
      this.checker.check(request, presentedKey, node);
      return presentedKey;
    }
    if (presentedKey !== undefined && presentedKey !== record.publicKey) {
      // Only a key that signed this very join is recorded: nobody can park a key they do not hold.
      this.checker.check(request, presentedKey, node);
      if (record.pending?.publicKey !== presentedKey) {
        record.pending = { publicKey: presentedKey, at: this.opts.now() };
        this.store?.save(record);
        this.changed();
      }
      throw new ApiProblem(
        409,
        `node ${node} presents a new key (fingerprint ${fingerprintOf(presentedKey)}; the pinned one is ${fingerprintOf(record.publicKey)}); ` +
          `accept it in the Workers view or with \`gpu-share workers accept-key ${node}\``,
      );
    }
    this.checker.check(request, record.publicKey, node);
    return null;
  }

  /** Pins `publicKey` for a node that has none yet (after its first signed join was admitted). */
  pin(node: string, publicKey: string): void {
    if (this.records.has(node)) return;
    const record: NodeKeyRecord = { node, publicKey, pinnedAt: this.opts.now(), pending: null };
    this.records.set(node, record);
    this.store?.save(record);
    this.changed();
  }

  /** Throws 401 unless a worker request of `node` is signed by its pinned key; requests of unsigned nodes pass. */
  checkRequest(node: string, request: RequestToCheck): void {
    const record = this.records.get(node);
    if (record) this.checker.check(request, record.publicKey, node);
  }

  /** The person accepted the node's new key: it is pinned, the old one no longer speaks for the node. */
  accept(node: string): NodeKeyRecord {
    const record = this.records.get(node);
    if (!record?.pending) {
      throw new ApiProblem(404, record ? `node ${node} has no new key waiting to be accepted (its key is ${fingerprintOf(record.publicKey)})` : `no node named ${node} has joined with a key`);
    }
    record.publicKey = record.pending.publicKey;
    record.pinnedAt = this.opts.now();
    record.pending = null;
    this.store?.save(record);
    this.changed();
    return { ...record };
  }

  /** The key record of a node, or null when it never joined signed. */
  get(node: string): NodeKeyRecord | null {
    const r = this.records.get(node);
    return r ? { ...r, pending: r.pending ? { ...r.pending } : null } : null;
  }

  /** Worker snapshots with their node's key fingerprint and, when one waits, the held-back key. */
  annotate(workers: WorkerSnapshot[]): WorkerSnapshot[] {
    return workers.map((w) => {
      const r = this.records.get(w.node);
      if (!r) return w;
      return { ...w, keyFingerprint: fingerprintOf(r.publicKey), ...(r.pending ? { keyHeldBack: { fingerprint: fingerprintOf(r.pending.publicKey), since: r.pending.at } } : {}) };
    });
  }

  /** Called after every pin, held-back key and acceptance; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}
