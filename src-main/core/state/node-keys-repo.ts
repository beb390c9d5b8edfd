/**
 * The node_keys table: which Ed25519 key is pinned for each node, and a new key held back for the person's yes
 * (src-main/core/coordinator/node-keys.ts decides; this keeps it across restarts). Writes are acknowledged.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { NodeKeyRecord, NodeKeyStore } from '../coordinator/node-keys';
import type { BatchedWriter } from './batched-writer';

interface Row {
  node: string;
  public_key: string;
  pinned_at: number;
  pending_key: string | null;
  pending_at: number | null;
}

export class NodeKeysRepo implements NodeKeyStore {
  private readonly upsert: Statement<[string, string, number, string | null, number | null]>;
  private readonly listStmt: Statement<[], Row>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
  ) {
    this.upsert = db.prepare(
      'INSERT INTO node_keys (node, public_key, pinned_at, pending_key, pending_at) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (node) DO UPDATE SET public_key = excluded.public_key, pinned_at = excluded.pinned_at, pending_key = excluded.pending_key, pending_at = excluded.pending_at',
    );
    this.listStmt = db.prepare('SELECT node, public_key, pinned_at, pending_key, pending_at FROM node_keys ORDER BY node');
  }

  save(record: NodeKeyRecord): void {
    this.writer.writeNow(() => this.upsert.run(record.node, record.publicKey, record.pinnedAt, record.pending?.publicKey ?? null, record.pending?.at ?? null));
  }

  list(): NodeKeyRecord[] {
    return this.writer
      .read(() => this.listStmt.all())
      .map((r) => ({ node: r.node, publicKey: r.public_key, pinnedAt: r.pinned_at, pending: r.pending_key !== null && r.pending_at !== null ? { publicKey: r.pending_key, at: r.pending_at } : null }));
  }
}
