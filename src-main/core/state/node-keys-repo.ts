/**
 * The node_keys table: which Ed25519 key is approved for each node (src-main/core/coordinator/node-keys.ts
 * decides; this keeps it across restarts). Only approved keys are written: machines awaiting approval and keys
 * held back live in memory, bounded. The pending_* columns of older versions are no longer written or read.
 * Writes are acknowledged.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { NodeKeyRecord, NodeKeyStore } from '../coordinator/membership';
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
  private readonly deleteStmt: Statement<[string]>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
  ) {
    this.upsert = db.prepare(
      'INSERT INTO node_keys (node, public_key, pinned_at, pending_key, pending_at) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (node) DO UPDATE SET public_key = excluded.public_key, pinned_at = excluded.pinned_at, pending_key = excluded.pending_key, pending_at = excluded.pending_at',
    );
    this.listStmt = db.prepare('SELECT node, public_key, pinned_at, pending_key, pending_at FROM node_keys ORDER BY node');
    this.deleteStmt = db.prepare('DELETE FROM node_keys WHERE node = ?');
  }

  save(record: NodeKeyRecord): void {
    this.writer.writeNow(() => this.upsert.run(record.node, record.publicKey, record.pinnedAt, null, null));
  }

  /** The node's approval was revoked. */
  remove(node: string): void {
    this.writer.writeNow(() => this.deleteStmt.run(node));
  }

  list(): NodeKeyRecord[] {
    return this.writer
      .read(() => this.listStmt.all())
      .map((r) => ({ node: r.node, publicKey: r.public_key, pinnedAt: r.pinned_at, pending: null }));
  }
}
