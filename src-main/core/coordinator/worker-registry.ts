/**
 * The workers this coordinator knows, beside the elastic pool's view of them (state, incarnation): what each
 * machine told us at its join, where it connects from, its latest progress and its instruction mailbox. A
 * node name maps to one worker id for good: a machine that comes back keeps its id and gets a new incarnation.
 */
import type { WorkerGpu, WorkerSnapshot } from '../../../src-shared/training';
import type { JoinRequest, Progress } from '../../../src-shared/worker-protocol';
import type { RemoteOutputState } from '../../../src-shared/terminal-text';
import type { Clock } from '../../platform/ports';
import { ApiProblem } from './api-problem';
import type { ElasticPool, PoolWorker } from './elastic-pool';
import { InstructionMailbox } from './instruction-mailbox';
import { plural } from './user-messages';
import type { ConnectionFacts } from './worker-gate';

/** Failed or left workers remembered for the Workers view; older ones are forgotten (their names stay bound). */
export const MAX_GONE_WORKERS = 100;

export interface WorkerRecord {
  id: number;
  node: string;
  gpus: WorkerGpu[];
  cpuCores: number;
  ramMb: number;
  address: string | null;
  /** The coordinator's address on this worker's connection, and whether the worker is on this machine. */
  coordinatorAddr: string | null;
  sameMachine: boolean;
  advertiseHost: string;
  rdzvPort: number;
  hasTorch: boolean;
  local: boolean;
  lastHeartbeatAt: number;
  progress: Progress | null;
  mailbox: InstructionMailbox;
  /** The agent said goodbye; its later heartbeats are refused until it joins again. */
  leaveReceived: boolean;
  /** Highest report batchSeq taken from this incarnation (0: none); a batch at or below it is a repeat. */
  lastBatchSeq: number;
  /** Escape-sequence state of this worker's output stream (sequences may span reports). */
  outputState: RemoteOutputState;
}

/** The fields a (re)join sets, from what the agent said and what its connection showed. */
export type JoinFields = Omit<WorkerRecord, 'id' | 'progress' | 'mailbox' | 'leaveReceived'>;

export class WorkerRegistry {
  private readonly records = new Map<number, WorkerRecord>();
  private readonly byNode = new Map<string, number>();

  constructor(
    private readonly pool: ElasticPool,
    private readonly clock: Clock,
  ) {}

  joinFields(req: JoinRequest, gpus: WorkerGpu[], conn: ConnectionFacts): JoinFields {
    return {
      node: req.node,
      gpus,
      cpuCores: req.cpuCores,
      ramMb: req.ramMb,
      address: conn.seenFrom,
      coordinatorAddr: conn.coordinatorAddr,
      sameMachine: conn.sameMachine,
      advertiseHost: req.advertiseHost,
      rdzvPort: req.rdzvPort,
      hasTorch: req.python !== null,
      local: req.local ?? false,
      lastHeartbeatAt: this.clock.now(),
      // Batch numbers start again with every incarnation.
      lastBatchSeq: 0,
      outputState: {},
    };
  }

  add(id: number, fields: JoinFields, onQueued: () => void): WorkerRecord {
    const rec: WorkerRecord = { id, ...fields, progress: null, mailbox: new InstructionMailbox(onQueued), leaveReceived: false };
    this.records.set(id, rec);
    this.byNode.set(fields.node, id);
    return rec;
  }

  /** A worker remembered from before a restart (not live): what its join told us, until it joins again. */
  restore(w: Pick<WorkerSnapshot, 'id' | 'node' | 'gpus' | 'address' | 'local' | 'lastHeartbeatAt'>, onQueued: () => void): WorkerRecord {
    const fields: JoinFields = {
      node: w.node,
      gpus: w.gpus.map((g) => ({ ...g })),
      cpuCores: 0,
      ramMb: 0,
      address: w.address,
      coordinatorAddr: null,
      sameMachine: false,
      advertiseHost: w.address ?? '',
      rdzvPort: 0,
      hasTorch: false,
      local: w.local,
      lastHeartbeatAt: w.lastHeartbeatAt,
      lastBatchSeq: 0,
      outputState: {},
    };
    return this.add(w.id, fields, onQueued);
  }

  get(workerId: number): WorkerRecord | undefined {
    return this.records.get(workerId);
  }

  idForNode(node: string): number | undefined {
    return this.byNode.get(node);
  }

  hasNode(node: string): boolean {
    return this.byNode.has(node);
  }

  require(workerId: number): WorkerRecord {
    const rec = this.records.get(workerId);
    if (!rec) {
      throw new ApiProblem(404, `no worker ${workerId} here: it never joined this coordinator, or the coordinator restarted since; join again`);
    }
    return rec;
  }

  checkIncarnation(rec: WorkerRecord, incarnation: number, what: string): void {
    const pw = this.pool.worker(rec.id)!;
    if (incarnation !== pw.incarnation) {
      throw new ApiProblem(
        409,
        `stale ${what}: worker ${rec.id} (${rec.node}) is at incarnation ${pw.incarnation}, this came from incarnation ${incarnation}; stop its training and join again`,
      );
    }
    if (pw.state === 'failed') {
      throw new ApiProblem(409, `stale ${what}: worker ${rec.id} (${rec.node}) was declared failed (${pw.stateCause}); stop its training and join again`);
    }
  }

  /** The worker's record when it may still speak; null when it drained and is only winding down (answered, ignored). */
  liveRecord(workerId: number, incarnation: number, what: string): WorkerRecord | null {
    const rec = this.require(workerId);
    this.checkIncarnation(rec, incarnation, what);
    const pw = this.pool.worker(workerId)!;
    if (pw.state === 'left') {
      if (rec.leaveReceived) throw new ApiProblem(409, `worker ${workerId} (${rec.node}) has left (${pw.stateCause}); join again to take part`);
      // Drained: its training stopped and its goodbye is on the way. Answer without instructions.
      return what === 'report' ? rec : null;
    }
    return rec;
  }

  /**
   * Forgets the oldest failed or left workers beyond MAX_GONE_WORKERS (21,000 random joins once grew the
   * coordinator by 60 MB and its state reply to 6.5 MB), except members of the live run. Their names stay
   * bound to their machines (the gate keeps the bindings). Returns the forgotten ids.
   */
  pruneGone(keep: ReadonlySet<number>): number[] {
    const gone = this.pool.allWorkers().filter((w) => w.state === 'failed' || w.state === 'left');
    if (gone.length <= MAX_GONE_WORKERS) return [];
    const forgotten: number[] = [];
    for (const w of gone.slice(0, gone.length - MAX_GONE_WORKERS)) {
      if (keep.has(w.workerId)) continue;
      const rec = this.records.get(w.workerId);
      this.pool.forget(w.workerId);
      this.records.delete(w.workerId);
      if (rec && this.byNode.get(rec.node) === w.workerId) this.byNode.delete(rec.node);
      forgotten.push(w.workerId);
    }
    return forgotten;
  }

  describeHardware(rec: WorkerRecord): string {
    const gpuText = rec.gpus.length === 0 ? 'no GPU' : `${plural(rec.gpus.length, 'GPU')} (${[...new Set(rec.gpus.map((g) => g.name))].join(', ')})`;
    return `${gpuText}, ${plural(rec.cpuCores, 'core')}, ${(rec.ramMb / 1024).toFixed(0)} GiB RAM`;
  }

  snapshot(workerId: number): WorkerSnapshot | null {
    const pw = this.pool.worker(workerId);
    return pw ? this.snapshotOf(pw) : null;
  }

  snapshots(): WorkerSnapshot[] {
    return this.pool.allWorkers().map((pw) => this.snapshotOf(pw));
  }

  private snapshotOf(pw: PoolWorker): WorkerSnapshot {
    const rec = this.records.get(pw.workerId)!;
    return {
      id: pw.workerId,
      node: rec.node,
      incarnation: pw.incarnation,
      state: pw.state,
      stateCause: pw.stateCause,
      gpus: rec.gpus.map((g) => ({ ...g })),
      backend: pw.backend === 'cuda' ? 'cuda' : 'cpu',
      joinedAt: pw.joinedAt,
      lastHeartbeatAt: rec.lastHeartbeatAt,
      step: rec.progress?.step ?? null,
      loss: rec.progress?.loss ?? null,
      samplesPerSec: rec.progress?.samplesPerSec ?? null,
      address: rec.address,
      local: rec.local,
      cpuCores: rec.cpuCores,
      ramMb: rec.ramMb,
    };
  }
}
