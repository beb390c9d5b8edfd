/**
 * What `gpu-share worker` (cli/run-worker.ts) runs: this machine's worker agent, its node key and the proof a
 * heard coordinator gives. The entry points reach agent/ only through app/ (eslint.config.js), so the CLI's
 * standalone worker borrows exactly these and nothing else.
 */
export { JoinError, WorkerAgent } from '../agent/worker-agent';
export { loadOrCreateNodeIdentity, NodeKeyMovedError } from '../agent/node-identity';
export { proveCoordinator } from '../agent/coordinator-proof';
