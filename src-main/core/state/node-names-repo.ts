/**
 * Which machine owns each node name, as WorkerGate binds them: a name stays with the machine that first used
 * it, even after its worker record is forgotten, so a stranger holding the join token cannot take it over
 * after a restart. Stores WorkerGate's hash of the machine id, never the id. Writes are acknowledged.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { BatchedWriter } from './batched-writer';

export interface NodeNameBinding {
  node: string;
  machineHash: string;
  /** Address the name was first seen from. */
  firstFrom: string | null;
  boundAt: number;
}

interface Row {
  node: string;
  machine_hash: string;
  first_from: string | null;
  bound_at: number;
}

function fromRow(row: Row): NodeNameBinding {
  return { node: row.node, machineHash: row.machine_hash, firstFrom: row.first_from, boundAt: row.bound_at };
}

export class NodeNamesRepo {
  private readonly insert: Statement<[string, string, string | null, number]>;
  private readonly deleteStmt: Statement<[string]>;
  private readonly getStmt: Statement<[string], Row>;
  private readonly listStmt: Statement<[], Row>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
  ) {
    this.insert = db.prepare('INSERT INTO node_names (node, machine_hash, first_from, bound_at) VALUES (?, ?, ?, ?) ON CONFLICT (node) DO NOTHING');
    this.deleteStmt = db.prepare('DELETE FROM node_names WHERE node = ?');
    this.getStmt = db.prepare('SELECT node, machine_hash, first_from, bound_at FROM node_names WHERE node = ?');
    this.listStmt = db.prepare('SELECT node, machine_hash, first_from, bound_at FROM node_names ORDER BY bound_at, node');
  }

  /** Binds the name to the machine unless it is bound already (acknowledged); returns the binding in force. */
  bind(binding: NodeNameBinding): NodeNameBinding {
    return this.writer.writeNow(() => {
      this.insert.run(binding.node, binding.machineHash, binding.firstFrom, binding.boundAt);
      return fromRow(this.getStmt.get(binding.node)!);
    });
  }

  /** Releases the name (acknowledged), as WorkerGate does for the oldest unused names past its cap. */
  forget(node: string): void {
    this.writer.writeNow(() => this.deleteStmt.run(node));
  }

  get(node: string): NodeNameBinding | null {
    const row = this.writer.read(() => this.getStmt.get(node));
    return row ? fromRow(row) : null;
  }

  /** Every binding, oldest first. */
  list(): NodeNameBinding[] {
    return this.writer.read(() => this.listStmt.all()).map(fromRow);
  }
}
