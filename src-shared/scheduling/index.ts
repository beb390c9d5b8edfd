/** Placement of adapter jobs on the cluster's slots and VRAM budgets, and the ledger the node cards draw. Pure. */
export { nodeCapacities, type GpuCapacity, type NodeCapacity, type WorkerFacts } from './capacity';
export { jobVramDemandMb } from './demand';
export { formatGib } from './gib';
export { gpuRemainingMb, type Holding } from './holdings';
export { buildLedger } from './ledger';
export { jobPlan, placeJobs, type JobPlacement, type PendingJob, type PlaceOptions } from './place-jobs';
