/**
 * How adapter jobs ride on the coordinator's worker channel: job beats arrive with heartbeats, and the job
 * service hands instructions (runJob, cancelJob) to a worker's mailbox. The job service (core/jobs) lives beside
 * the coordinator rather than inside it; this is the seam between them.
 */
import type { HeartbeatRequest, Instruction } from '../../../src-shared/worker-protocol';

export interface CoordinatorJobHooks {
  /** A live worker's heartbeat carried job beats or GPU free memory; runs before its answer is built. */
  beats(workerId: number, node: string, req: Pick<HeartbeatRequest, 'jobs' | 'gpuFree'>): void;
}

export type { Instruction };
