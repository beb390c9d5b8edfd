/**
 * Membership's public face: who is in the cluster and in which state — joins and their approval, presence and
 * its grace, epochs, node keys, the connection gate, forgetting a node. It imports common/ (and core/api's request
 * signature check) only; links, runs and the service import it through this file.
 */
export { DEFAULT_FAILOVER_GRACE_MS, FailoverGrace } from './failover-grace';
export { forgetNode } from './forget-node';
export { decideJoin, type EarlierRecord, type JoinDecision, type ReplacedSession } from './join-decision';
export { joinFields } from './join-fields';
export { formatSeconds, LIVE_STATES, type JoinFields, type MemberRecord, type PoolTransition } from './member-record';
export { DEFAULT_MAX_MACHINES, Membership, type MembershipOptions, type PoolJoinResult } from './membership';
export { fingerprintOf, NodeKeys, type NodeKeyRecord, type NodeKeyStore } from './node-keys';
export { transitionEvent } from './transition-event';
export { connectionFacts, isLoopbackAddress, recordSessions, unwrapAddress, WorkerGate, type ConnectionFacts } from './worker-gate';
