/**
 * What a machine's join told the coordinator, read into the fields of its one membership record
 * (member-record.ts), and the registry's old face over Membership for the run code that still says `workers`.
 * A node name maps to one worker id for good: a machine that comes back keeps its id and gets a new incarnation.
 */
import type { WorkerGpu, WorkerSnapshot } from '../../../../src-shared/training';
import type { JoinRequest } from '../../../../src-shared/worker-protocol';
import { sanitizeNodeName } from '../../../../src-shared/terminal-text';
import type { Clock } from '../../../platform/ports';
import type { JoinFields, MemberRecord } from './member-record';
import type { Membership } from './membership';
import type { ConnectionFacts } from './worker-gate';

export type { JoinFields } from './member-record';
export type { MemberRecord as WorkerRecord } from './member-record';

/** The fields a (re)join sets, from what the agent said (GPU names made safe to print) and what its connection showed. */
export function joinFields(req: JoinRequest, conn: ConnectionFacts, clock: Clock): JoinFields {
  const gpus: WorkerGpu[] = req.gpus.map((g) => ({ uuid: g.uuid === null ? null : sanitizeNodeName(g.uuid), name: sanitizeNodeName(g.name), vramTotalMb: g.vramTotalMb, ...(g.memoryType ? { memoryType: g.memoryType } : {}) }));
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
    ...(req.rdzvPorts ? { rdzvPorts: req.rdzvPorts } : {}),
    probePort: req.probePort,
    blobPort: req.blobPort,
    hasTorch: req.python !== null,
    torchVersion: req.python ? sanitizeNodeName(req.python.torchVersion).slice(0, 50) : null,
    local: req.local ?? false,
    lastHeartbeatAt: clock.now(),
    // Batch numbers start again with every incarnation.
    lastBatchSeq: 0,
    outputState: {},
  };
}

/** Reads of the one record per machine, under the registry's old names. */
export class WorkerRegistry {
  constructor(private readonly members: Membership) {}

  get(workerId: number): MemberRecord | undefined {
    return this.members.worker(workerId);
  }

  require(workerId: number): MemberRecord {
    return this.members.require(workerId);
  }

  idForNode(node: string): number | undefined {
    return this.members.idForNode(node);
  }

  hasNode(node: string): boolean {
    return this.members.hasNode(node);
  }

  checkIncarnation(rec: MemberRecord, incarnation: number, what: string): void {
    this.members.checkIncarnation(rec, incarnation, what);
  }

  liveRecord(workerId: number, incarnation: number, what: string): MemberRecord | null {
    return this.members.liveRecord(workerId, incarnation, what);
  }

  describeHardware(rec: MemberRecord): string {
    return rec.describeHardware();
  }

  snapshot(workerId: number): WorkerSnapshot | null {
    return this.members.snapshot(workerId);
  }

  snapshots(): WorkerSnapshot[] {
    return this.members.snapshots();
  }
}
