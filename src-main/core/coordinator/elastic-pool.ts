/**
 * The elastic pool's old name for cluster membership (membership.ts), kept while the run code still says
 * `pool`. Membership no longer carries anything of a run: a run's min/max workers and its heartbeat timeout
 * used to be the pool's limits, so a run of max_workers 1 refused every other machine's join. What is left
 * here are no-op stand-ins for the calls the run controller still makes; delete them with those calls.
 */
import { Membership } from './membership';

export { formatSeconds, LIVE_STATES, type PoolTransition } from './member-record';
export type { MemberRecord as PoolWorker } from './member-record';
export type { MembershipOptions as ElasticPoolOptions, PoolJoinResult } from './membership';

/** What a run used to set on the pool. Only the cluster's values are real now (see getLimits). */
export interface PoolLimits {
  minWorkers: number;
  maxWorkers: number;
  heartbeatTimeoutMs: number;
}

export class ElasticPool extends Membership {
  /** @deprecated A run's limits no longer change membership: ignored. Remove the caller. */
  setLimits(_limits: PoolLimits): void {}

  /** @deprecated The cluster's heartbeat timeout and machine bound; read `heartbeatTimeoutMs` / `maxMachines` instead. */
  getLimits(): PoolLimits {
    return { minWorkers: 1, maxWorkers: this.maxMachines, heartbeatTimeoutMs: this.heartbeatTimeoutMs };
  }

  /** @deprecated The training step is the run's, not membership's: ignored. Remove the caller. */
  setStep(_step: number): void {}
}
