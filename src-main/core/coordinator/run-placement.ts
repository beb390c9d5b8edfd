/**
 * What one run is offered when it is (re)planned: the active workers as candidates, and the one holdings ledger —
 * what jobs hold (from the job service, which knows cluster.yaml; or, without one, the workers' own capacities and
 * no jobs) plus what every other run's members hold. The decision itself is the pure planGeneration
 * (src-shared/scheduling), the same rules the job round reserves runs' picks with.
 */
import { nodeCapacities, type WorkerFacts } from '../../../src-shared/scheduling/capacity';
import type { Holding } from '../../../src-shared/scheduling/holdings';
import { planGeneration, runHoldings, type GenerationPlan, type RunCandidate } from '../../../src-shared/scheduling/plan-generation';
import { runDemand } from '../../../src-shared/scheduling/run-demand';
import type { ElasticPool } from './elastic-pool';
import type { JobCapacity } from './job-hooks';
import { memberHoldings, type RunRecord } from './run-record';

export interface RunPlacementDeps {
  pool: Pick<ElasticPool, 'activeWorkerIds' | 'worker' | 'allWorkers'>;
  /** What jobs hold, from the job service; null without one (unit tests, a coordinator with no job queue). */
  capacity: () => JobCapacity | null;
}

/**
 * Runs one agent trains at once. The agent supervises one training process group at a time (a start for another
 * run replaces the one it has: agent/training-supervisor.ts), so a worker is a member of one run at a time here,
 * even where planGeneration would put two GPU runs on different GPUs of one machine. Raise this once the agent
 * supervises several; the ledger already keeps their GPUs apart, and chooseRendezvous their stores.
 */
export const RUNS_PER_AGENT = 1;

/** Which workers `run`'s next generation has, with their GPUs; or why it must wait, node by node. */
export function planRun(deps: RunPlacementDeps, run: RunRecord, otherRuns: readonly RunRecord[]): GenerationPlan {
  const trainsFor = new Map<number, RunRecord[]>();
  for (const other of otherRuns) {
    if (other === run || other.state !== 'running') continue;
    for (const id of other.workerIds) trainsFor.set(id, [...(trainsFor.get(id) ?? []), other]);
  }
  const candidates: RunCandidate[] = [];
  const busy: { node: string; reason: string }[] = [];
  for (const id of deps.pool.activeWorkerIds()) {
    const w = deps.pool.worker(id);
    if (!w) continue;
    const others = trainsFor.get(id) ?? [];
    if (others.length >= RUNS_PER_AGENT) {
      const names = others.map((o) => `run ${o.spec.name}`).join(', ');
      busy.push({ node: w.node, reason: `${w.node} trains ${names} (its agent trains one run at a time)` });
      continue;
    }
    candidates.push({ workerId: id, node: w.node, hasTorch: w.hasTorch, joinSeq: w.joinSeq });
  }
  const jobs = deps.capacity() ?? { nodes: nodeCapacities({ nodes: [] }, workerFacts(deps.pool), []), holdings: [] };
  const holdings: Holding[] = jobs.holdings.filter((h) => h.kind === 'job');
  for (const other of otherRuns) if (other !== run) holdings.push(...runHoldings(other.id, other.spec.name, memberHoldings(other)));
  const request = { runId: run.id, name: run.spec.name, demand: runDemand(run.spec), currentMembers: [...run.workerIds] };
  const plan = planGeneration(request, candidates, { nodes: jobs.nodes, holdings });
  if (plan.kind === 'plan' || busy.length === 0) return plan;
  // The workers left out above are part of why it waits: "waits for 1 more worker: xeon trains run r1 (…)".
  const nodes = [...plan.nodes, ...busy];
  const head = plan.reason.slice(0, plan.reason.indexOf(': '));
  return { kind: 'hold', reason: `${head}: ${nodes.map((n) => n.reason).join('; ')}`, nodes };
}

/** Every worker's hardware as it joined: the capacity a coordinator without cluster.yaml has. */
function workerFacts(pool: Pick<ElasticPool, 'allWorkers'>): WorkerFacts[] {
  return pool.allWorkers().map((w) => ({ workerId: w.workerId, node: w.node, state: w.state, gpus: w.gpus, cpuCores: w.cpuCores, ramMb: w.ramMb }));
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
