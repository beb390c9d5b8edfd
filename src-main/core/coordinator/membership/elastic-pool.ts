/**
 * The elastic pool's old name for cluster membership (membership.ts), kept while the run code still says
 * `pool`. Membership no longer carries anything of a run: a run's min/max workers and its heartbeat timeout
 * used to be the pool's limits, so a run of max_workers 1 refused every other machine's join.
 */
import { Membership } from './membership';

export { formatSeconds, LIVE_STATES, type PoolTransition } from './member-record';
export type { MemberRecord as PoolWorker } from './member-record';
export type { MembershipOptions as ElasticPoolOptions, PoolJoinResult } from './membership';

/** The one membership record's old face, kept for the run code's `pool.worker(id)` and friends. */
export class ElasticPool extends Membership {}
