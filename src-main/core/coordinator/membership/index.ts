/**
 * Membership's public face: who is in the cluster and in which state — joins and their approval, presence and
 * its grace, epochs, node keys, the connection gate, forgetting a node. It imports common/ only; runs, links
 * and the service import it through this file.
 */
export { ElasticPool, type ElasticPoolOptions, type PoolJoinResult } from './elastic-pool';
export { DEFAULT_FAILOVER_GRACE_MS, FailoverGrace } from './failover-grace';
export { forgetNode } from './forget-node';
export { formatSeconds, LIVE_STATES, type JoinFields, type MemberRecord, type PoolTransition } from './member-record';
export { DEFAULT_MAX_MACHINES, Membership } from './membership';
export { fingerprintOf, NodeKeys, type NodeKeyRecord, type NodeKeyStore } from './node-keys';
export { transitionEvent } from './transition-event';
export { connectionFacts, isLoopbackAddress, recordSessions, unwrapAddress, WorkerGate, type ConnectionFacts } from './worker-gate';
export { joinFields, WorkerRegistry, type WorkerRecord } from './worker-registry';
