/** One scheduler for adapter jobs and training runs on the cluster's slots, GPUs and VRAM budgets, and the ledger the node cards draw. Pure. */
export { nodeCapacities, type GpuCapacity, type NodeCapacity, type WorkerFacts } from './capacity';
export { jobVramDemandMb } from './demand';
export { formatGib } from './gib';
export { gpuRemainingMb, heldGpuIndices, type Holding } from './holdings';
export { buildLedger } from './ledger';
export { jobPlan, placeJobs, type JobPlacement, type PendingJob, type PlaceOptions } from './place-jobs';
export {
  planMembers,
  runHoldings,
  type MemberPlan,
  type NodeReason,
  type PlanLedger,
  type PlannedMember,
  type RunCandidate,
  type RunPlanRequest,
} from './plan-generation';
export { runDemand, type RunDemand } from './run-demand';
export { RESERVED, reserveForRuns, type RunReservations } from './schedule-round';
export { COMM_SHARE_BUDGET, decideComm, describeStrategy, POWERSGD_BYTES_RATIO, type CommBackend, type CommChoiceInput } from './comm-choice';
export { orderRing, type RingMember, type RingPlan } from './ring-order';
