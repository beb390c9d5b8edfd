/**
 * What one run's next generation is decided from when it is (re)planned, gathered as plain facts for the pure
 * planGeneration (generation-plan.ts): the active workers as candidates and their records, the one holdings
 * ledger — what jobs hold (from the job service, which knows cluster.yaml; or, without one, the workers' own
 * capacities and no jobs) plus what every other run's members hold —, the link map, the store ports other runs
 * take, the trainer's step and the clock. The members are chosen by planMembers (src-shared/scheduling), the same
 * rules the job round reserves runs' picks with.
 */
import { nodeCapacities, type WorkerFacts } from '../../../../src-shared/scheduling/capacity';
import type { Holding } from '../../../../src-shared/scheduling/holdings';
import { runHoldings, type RunCandidate } from '../../../../src-shared/scheduling/plan-generation';
import type { LinkMeasurement } from '../../../../src-shared/links/link-matrix';
import type { Clock } from '../../../platform/ports';
import type { Membership } from '../membership';
import { stepFor } from './generation-comm';
import type { GenerationInput, MemberFacts, RunFacts } from './generation-plan';
import type { JobCapacity } from '../common';
import { projectFacts } from './run-project-gate';
import { memberHoldings, type RunRecord } from './run-record';
import { drainingStoreHost } from './store-handover';
import type { TrainerStepMemory } from './trainer-step-memory';

export interface GenerationInputDeps {
  pool: Pick<Membership, 'activeWorkerIds' | 'worker' | 'allWorkers'>;
  /** What jobs hold, from the job service; null without one (unit tests, a coordinator with no job queue). */
  capacity: () => JobCapacity | null;
  links?: () => readonly LinkMeasurement[];
  stepMemory?: Pick<TrainerStepMemory, 'peek'>;
  trustAdvertised: boolean;
  rdzvHostOverride: string | undefined;
  clock: Clock;
}

/** Why a worker's project is not ready for `run` (run-project-gate.ts); null: ready, or no project. */
export type ReadinessOf = (run: RunRecord, workerId: number) => string | null;

/** Everything `run`'s next generation is decided from (`otherRuns`: the live runs, this one may be among them). */
export function generationInput(deps: GenerationInputDeps, run: RunRecord, otherRuns: readonly RunRecord[], cause: string, readiness?: ReadinessOf): GenerationInput {
  // Which runs a machine may join beside others is the ledger's rule (run-fit.ts): whole GPUs no other run holds,
  // and a CPU run (or any run on a machine that is a CPU run's member) alone. The agent trains one run per GPU set.
  const candidates: RunCandidate[] = [];
  const records = new Map<number, MemberFacts>();
  for (const id of deps.pool.activeWorkerIds()) {
    const w = deps.pool.worker(id);
    if (w) candidates.push({ workerId: id, node: w.node, hasTorch: w.hasTorch, joinSeq: w.joinSeq, notReady: readiness?.(run, id) ?? null });
    const r = deps.pool.worker(id);
    if (r) records.set(id, memberFacts(r));
  }
  const jobs = deps.capacity() ?? { nodes: nodeCapacities({ nodes: [] }, workerFacts(deps.pool), []), holdings: [] };
  const holdings: Holding[] = jobs.holdings.filter((h) => h.kind === 'job');
  for (const other of otherRuns) if (other !== run) holdings.push(...runHoldings(other.id, other.spec.name, memberHoldings(other)));
  return {
    run: runFacts(run),
    candidates,
    ledger: { nodes: jobs.nodes, holdings },
    records,
    links: deps.links?.() ?? [],
    storePorts: storePortsTaken(run, otherRuns),
    step: stepFor(run.telemetry.commStats(), run.commMeasured, deps.stepMemory?.peek(run.spec) ?? null),
    trustAdvertised: deps.trustAdvertised,
    rdzvHostOverride: deps.rdzvHostOverride,
    cause,
    clock: { now: deps.clock.now(), monotonic: deps.clock.monotonic() },
  };
}

/** The run as planGeneration reads it. */
export function runFacts(run: RunRecord): RunFacts {
  return {
    id: run.id,
    spec: run.spec,
    generation: run.generation,
    currentMembers: [...run.workerIds],
    ...(run.driftCap !== undefined ? { driftCap: run.driftCap } : {}),
    storeDrainingHost: drainingStoreHost(run),
    startStep: progressStep(run),
    project: projectFacts(run),
  };
}

/** The step run.progress holds once refreshed (refreshProgress), without refreshing it. */
function progressStep(run: RunRecord): number {
  return (run.progressStale ? run.telemetry.progress()?.step : undefined) ?? run.progress?.step ?? 0;
}

/** What a plan reads of a worker's record. */
function memberFacts(r: MemberFacts): MemberFacts {
  const { node, address, coordinatorAddr, sameMachine, advertiseHost, rdzvPort, rdzvPorts, torchVersion } = r;
  return { node, address, coordinatorAddr, sameMachine, advertiseHost, rdzvPort, ...(rdzvPorts ? { rdzvPorts } : {}), ...(torchVersion !== undefined ? { torchVersion } : {}) };
}

/** The rendezvous ports other running runs' stores take, per worker hosting one (their endpoints end in the port). */
export function storePortsTaken(run: RunRecord, liveRuns: readonly RunRecord[]): Map<number, Set<number>> {
  const taken = new Map<number, Set<number>>();
  for (const other of liveRuns) {
    if (other === run || other.state !== 'running' || other.rdzvHostId === null || !other.rdzvEndpoint) continue;
    const port = Number(other.rdzvEndpoint.slice(other.rdzvEndpoint.lastIndexOf(':') + 1));
    taken.set(other.rdzvHostId, (taken.get(other.rdzvHostId) ?? new Set()).add(port));
  }
  return taken;
}

/** Every worker's hardware as it joined: the capacity a coordinator without cluster.yaml has. */
function workerFacts(pool: Pick<Membership, 'allWorkers'>): WorkerFacts[] {
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

/** The plan keeps the same members in the same order on the same GPUs: nothing to relaunch. */
export function samePlan(run: RunRecord, members: readonly { workerId: number; gpuIndices: number[] }[]): boolean {
  if (members.length !== run.workerIds.length) return false;
  return members.every((m, i) => {
    const current = run.members.get(m.workerId);
    return run.workerIds[i] === m.workerId && current !== undefined && current.gpuIndices.join(',') === m.gpuIndices.join(',');
  });
}
