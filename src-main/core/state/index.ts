/** The state database: open it with openStateDb(dataDir); see state-db.ts for which writes are acknowledged. */
export { ArtifactsRepo } from './artifacts-repo';
export { BatchedWriter, type BatchOptions, type PendingSource } from './batched-writer';
export { DEFAULT_MAX_EVENTS } from './events-repo';
export { DEFAULT_MAX_SHARD_MAPS } from './generations-repo';
export { DEFAULT_MAX_JOB_OUTPUT_BYTES } from './job-output';
export { DEFAULT_STALE_AFTER_MS, JobsRepo, type JobPlacementTarget, type JobRow } from './jobs-repo';
export { COUNTERS } from './kv-repo';
export { DEFAULT_MAX_LOSS_POINTS } from './loss-points-repo';
export { latestVersion, MIGRATIONS, schemaVersion, type Migration } from './migrations';
export type { NodeNameBinding } from './node-names-repo';
export { openStateDb, STATE_DB_FILE, type OpenStateDbOptions } from './open-state-db';
export { DEFAULT_MAX_OUTPUT_BYTES, type OutputChunk } from './output-tail-repo';
export type { WorkerProgress } from './run-workers-repo';
export type { StoredRun } from './runs-repo';
export { StateDb, type StateLimits } from './state-db';
export { StateDbPathError, StateDbTooNewError } from './state-db-errors';
export { VramPeaksRepo } from './vram-peaks-repo';
export { registeredToSnapshot, type RegisteredWorker } from './worker-registry-repo';
