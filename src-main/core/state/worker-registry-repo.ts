/**
 * The worker registry: every worker the coordinator knows, with the hash of its machine id (WorkerGate's hash,
 * never the id itself: the id is what proves a node name belongs to a machine). Joins, state changes and
 * removals are acknowledged; heartbeat times are batched. Progress (step, loss, samples/s) is not kept: a
 * worker's progress starts empty when it joins again.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { WorkerGpu, WorkerSnapshot, WorkerState } from '../../../src-shared/training';
import type { StoredWorker } from '../coordinator/common';
import type { BatchedWriter } from './batched-writer';
import { PendingMap } from './pending-queues';

export type { StoredWorker };

interface WorkerRow {
  id: number;
  node: string;
  machine_hash: string;
  incarnation: number;
  gpus: string;
  backend: string;
  address: string | null;
  local: number;
  state: string;
  state_cause: string;
  joined_at: number;
  last_heartbeat_at: number;
}

const COLUMNS = 'id, node, machine_hash, incarnation, gpus, backend, address, local, state, state_cause, joined_at, last_heartbeat_at';

function toRow(w: StoredWorker): WorkerRow {
  return {
    id: w.id,
    node: w.node,
    machine_hash: w.machineHash,
    incarnation: w.incarnation,
    gpus: JSON.stringify(w.gpus),
    backend: w.backend,
    address: w.address,
    local: w.local ? 1 : 0,
    state: w.state,
    state_cause: w.stateCause,
    joined_at: w.joinedAt,
    last_heartbeat_at: w.lastHeartbeatAt,
  };
}

function fromRow(row: WorkerRow): StoredWorker {
  return {
    id: row.id,
    node: row.node,
    machineHash: row.machine_hash,
    incarnation: row.incarnation,
    gpus: JSON.parse(row.gpus) as WorkerGpu[],
    backend: row.backend === 'cuda' ? 'cuda' : 'cpu',
    address: row.address,
    local: row.local === 1,
    state: row.state as WorkerState,
    stateCause: row.state_cause,
    joinedAt: row.joined_at,
    lastHeartbeatAt: row.last_heartbeat_at,
  };
}

/** The snapshot the UI shows for a worker restored from the registry: no progress until it reports again. */
export function storedToSnapshot(worker: StoredWorker): WorkerSnapshot {
  const { machineHash: _hash, ...rest } = worker;
  return { ...rest, gpus: rest.gpus.map((g) => ({ ...g })), step: null, loss: null, samplesPerSec: null };
}

export class WorkerRegistryRepo {
  private readonly upsert: Statement<[WorkerRow]>;
  private readonly stateStmt: Statement<[string, string, number]>;
  private readonly touchStmt: Statement<[number, number]>;
  private readonly deleteStmt: Statement<[number]>;
  private readonly getStmt: Statement<[number], WorkerRow>;
  private readonly listStmt: Statement<[], WorkerRow>;
  private readonly lastSeen: PendingMap<number, number>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
  ) {
    const names = COLUMNS.split(', ');
    const updates = names
      .slice(1)
      .map((c) => `${c} = excluded.${c}`)
      .join(', ');
    this.upsert = db.prepare(`INSERT INTO workers (${COLUMNS}) VALUES (${names.map((c) => `@${c}`).join(', ')}) ON CONFLICT (id) DO UPDATE SET ${updates}`);
    this.stateStmt = db.prepare('UPDATE workers SET state = ?, state_cause = ? WHERE id = ?');
    // Heartbeat times only move forward: a batched time older than a saved one is not written over it.
    this.touchStmt = db.prepare('UPDATE workers SET last_heartbeat_at = max(last_heartbeat_at, ?) WHERE id = ?');
    this.deleteStmt = db.prepare('DELETE FROM workers WHERE id = ?');
    this.getStmt = db.prepare(`SELECT ${COLUMNS} FROM workers WHERE id = ?`);
    this.listStmt = db.prepare(`SELECT ${COLUMNS} FROM workers ORDER BY id`);
    this.lastSeen = new PendingMap(writer, (batch) => {
      for (const [id, at] of batch) this.touchStmt.run(at, id);
    });
  }

  /** Inserts or replaces the worker (acknowledged): at join, rejoin (new incarnation), or any change of its record. */
  save(worker: StoredWorker): void {
    const row = toRow(worker);
    this.writer.writeNow(() => this.upsert.run(row));
  }

  /** Records a state change and its cause (acknowledged). */
  setState(workerId: number, state: WorkerState, cause: string): void {
    this.writer.writeNow(() => this.stateStmt.run(state, cause, workerId));
  }

  /** Records a heartbeat's time (batched, coalesced per worker). */
  touch(workerId: number, at: number): void {
    this.lastSeen.set(workerId, Math.max(at, this.lastSeen.get(workerId) ?? at), 16);
  }

  /** Forgets the worker (acknowledged); its node name stays bound (see NodeNamesRepo). */
  remove(workerId: number): void {
    this.lastSeen.delete(workerId);
    this.writer.writeNow(() => this.deleteStmt.run(workerId));
  }

  get(workerId: number): StoredWorker | null {
    const row = this.writer.read(() => this.getStmt.get(workerId));
    return row ? fromRow(row) : null;
  }

  /** Every registered worker, by id. */
  list(): StoredWorker[] {
    return this.writer.read(() => this.listStmt.all()).map(fromRow);
  }

  /** Every registered worker as the UI shows it (no progress until it reports again). */
  listSnapshots(): WorkerSnapshot[] {
    return this.list().map(storedToSnapshot);
  }
}
