/**
 * What a machine's join told the coordinator, read into the fields of its one membership record
 * (member-record.ts). A node name maps to one worker id for good: a machine that comes back keeps its id and
 * gets a new incarnation.
 */
import type { WorkerGpu } from '../../../../src-shared/training';
import type { JoinRequest } from '../../../../src-shared/worker-protocol';
import { sanitizeNodeName } from '../../../../src-shared/terminal-text';
import type { Clock } from '../../../platform/ports';
import type { JoinFields } from './member-record';
import type { ConnectionFacts } from './worker-gate';

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
