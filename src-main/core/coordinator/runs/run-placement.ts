/**
 * What one run is offered when it is (re)planned: the active workers as candidates, and the one holdings ledger —
 * what jobs hold (from the job service, which knows cluster.yaml; or, without one, the workers' own capacities and
 * no jobs) plus what every other run's members hold. The decision itself is the pure planGeneration
 * (src-shared/scheduling), the same rules the job round reserves runs' picks with.
 */
import { nodeCapacities, type WorkerFacts } from '../../../../src-shared/scheduling/capacity';
import type { Holding } from '../../../../src-shared/scheduling/holdings';
import { planGeneration, runHoldings, type GenerationPlan, type RunCandidate } from '../../../../src-shared/scheduling/plan-generation';
import { runDemand } from '../../../../src-shared/scheduling/run-demand';
import type { ElasticPool } from '../membership';
import type { JobCapacity } from '../common';
import { memberHoldings, type RunRecord } from './run-record';

export interface RunPlacementDeps {
  pool: Pick<ElasticPool, 'activeWorkerIds' | 'worker' | 'allWorkers'>;
  /** What jobs hold, from the job service; null without one (unit tests, a coordinator with no job queue). */
  capacity: () => JobCapacity | null;
}

/** Why a worker's project is not ready for `run` (run-project-gate.ts); null: ready, or no project. */
export type ReadinessOf = (run: RunRecord, workerId: number) => string | null;

/** Which workers `run`'s next generation has, with their GPUs; or why it must wait, node by node. */
export function planRun(deps: RunPlacementDeps, run: RunRecord, otherRuns: readonly RunRecord[], readiness?: ReadinessOf): GenerationPlan {
  // Which runs a machine may join beside others is the ledger's rule (run-fit.ts): whole GPUs no other run holds,
  // and a CPU run (or any run on a machine that is a CPU run's member) alone. The agent trains one run per GPU set.
  const candidates: RunCandidate[] = [];
  for (const id of deps.pool.activeWorkerIds()) {
    const w = deps.pool.worker(id);
    if (w) candidates.push({ workerId: id, node: w.node, hasTorch: w.hasTorch, joinSeq: w.joinSeq, notReady: readiness?.(run, id) ?? null });
  }
  const jobs = deps.capacity() ?? { nodes: nodeCapacities({ nodes: [] }, workerFacts(deps.pool), []), holdings: [] };
  const holdings: Holding[] = jobs.holdings.filter((h) => h.kind === 'job');
  for (const other of otherRuns) if (other !== run) holdings.push(...runHoldings(other.id, other.spec.name, memberHoldings(other)));
  const request = { runId: run.id, name: run.spec.name, demand: runDemand(run.spec), currentMembers: [...run.workerIds] };
  return planGeneration(request, candidates, { nodes: jobs.nodes, holdings });
}

/** Every worker's hardware as it joined: the capacity a coordinator without cluster.yaml has. */
function workerFacts(pool: Pick<ElasticPool, 'allWorkers'>): WorkerFacts[] {
  return pool.allWorkers().map((w) => ({ workerId: w.workerId, node: w.node, state: w.state, gpus: w.gpus, cpuCores: w.cpuCores, ramMb: w.ramMb, local: w.local }));
}

/** A short key of what jobs hold: when it changes, capacity moved and runs below max_workers are re-planned. */
export function jobHoldingsKey(capacity: JobCapacity | null): string {
  if (!capacity) return '';
  return capacity.holdings
    .filter((h) => h.kind === 'job')
    .map((h) => `${h.id}@${h.node}:${h.gpuIndex ?? '-'}`)
    .sort()
    .join(',');
}
