/**
 * How adapter jobs ride on the coordinator's worker channel: job beats arrive with heartbeats, and the job
 * service hands instructions (runJob, cancelJob) to a worker's mailbox. The job service (core/jobs) lives beside
 * the coordinator rather than inside it; this is the seam between them. It is also how runs learn what jobs hold:
 * the job service knows cluster.yaml and the jobs' claims, the coordinator does not.
 */
import type { NodeCapacity } from '../../../../src-shared/scheduling/capacity';
import type { Holding } from '../../../../src-shared/scheduling/holdings';
import type { HeartbeatRequest, Instruction } from '../../../../src-shared/worker-protocol';

/** The cluster's nodes (cluster.yaml ∩ what workers detected) and what jobs hold of them (job holdings only). */
export interface JobCapacity {
  nodes: NodeCapacity[];
  holdings: Holding[];
}

export interface CoordinatorJobHooks {
  /** A live worker's heartbeat carried job beats or GPU free memory; runs before its answer is built. */
  beats(workerId: number, node: string, req: Pick<HeartbeatRequest, 'jobs' | 'gpuFree'>): void;
  /** What the cluster offers and what jobs hold now, so runs take nothing a job holds (and wait, saying so). */
  capacity?(): JobCapacity;
}

export type { Instruction };
