/**
 * The Nodes view's live-status channel, spread into ipc.ts's maps: a worker that joined but is declared
 * nowhere is written into cluster.yaml with the hardware it reported. Handlers: src-main/app/status-feature.ts.
 */
import { z } from 'zod';
import type { ClusterState } from '../cluster/ipc-cluster';

export const statusRequests = {
  addWorkerToCluster: { channel: 'cluster:add-worker', arg: z.object({ workerId: z.number().int().nonnegative() }) },
} as const;

export interface StatusRequestResults {
  addWorkerToCluster: ClusterState;
}
