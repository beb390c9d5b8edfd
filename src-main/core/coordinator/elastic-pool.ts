/**
 * The elastic pool's old name for cluster membership (membership.ts), kept while the run code still says
 * `pool`. Membership no longer carries anything of a run: a run's min/max workers and its heartbeat timeout
 * used to be the pool's limits, so a run of max_workers 1 refused every other machine's join. What is left
 * here is a no-op stand-in for the call run-reattach.ts still makes; delete it with that call.
 */
import { Membership } from './membership';

export { formatSeconds, LIVE_STATES, type PoolTransition } from './member-record';
export type { MemberRecord as PoolWorker } from './member-record';
export type { MembershipOptions as ElasticPoolOptions, PoolJoinResult } from './membership';

/** What a run used to set on the pool; ignored now (see setLimits). */
export interface PoolLimits {
  minWorkers: number;
  maxWorkers: number;
  heartbeatTimeoutMs: number;
}

export class ElasticPool extends Membership {
  /** @deprecated A run's limits no longer change membership: ignored. Remove the caller. */
  setLimits(_limits: PoolLimits): void {}
}
