/** What a join tells membership, for tests that make machines without the service (membership tests). */
import type { JoinFields } from '../../../src-main/core/coordinator/membership/member-record';

export function fields(node: string, gpus = 1): JoinFields {
  return {
    node,
    gpus: Array.from({ length: gpus }, (_, i) => ({ uuid: `GPU-${node}-${i}`, name: 'NVIDIA GeForce RTX 4090', vramTotalMb: 24564 })),
    cpuCores: 8,
    ramMb: 32768,
    address: '10.0.0.2',
    coordinatorAddr: '10.0.0.1',
    sameMachine: false,
    advertiseHost: '10.0.0.2',
    rdzvPort: 29400,
    hasTorch: true,
    local: false,
    lastHeartbeatAt: 0,
    lastBatchSeq: 0,
    outputState: {},
  };
}
