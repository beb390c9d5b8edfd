/**
 * One placement round: what the cluster offers (cluster.yaml ∩ what each worker detected), what holds it now
 * (claimed and running jobs, every live run's members with their whole GPUs), and which pending jobs go where.
 * Runs come before pending jobs (src-shared/scheduling/schedule-round.ts): the capacity a waiting run's plan
 * would take is reserved before any job is placed, so a job never takes what a run is about to start on. Pure
 * apart from its inputs, so the service can run it whenever something changed. The service hands it only the
 * head of the queue (PLACEMENT_WINDOW pending jobs), so a round costs the same for 300 jobs as for 10,000.
 */
import type { ClusterConfig } from '../../../src-shared/cluster/types';
import type { HostPolicy, JobSpec, PlacementPolicy, PlacementPreview } from '../../../src-shared/jobs/types';
import { nodeCapacities, type NodeCapacity, type WorkerFacts } from '../../../src-shared/scheduling/capacity';
import { jobVramDemandMb } from '../../../src-shared/scheduling/demand';
import type { Holding } from '../../../src-shared/scheduling/holdings';
import { placeJobs, type JobPlacement } from '../../../src-shared/scheduling/place-jobs';
import { runHoldings, type MemberPlan, type RunCandidate, type RunPlanRequest } from '../../../src-shared/scheduling/plan-generation';
import { runDemand } from '../../../src-shared/scheduling/run-demand';
import { reserveForRuns } from '../../../src-shared/scheduling/schedule-round';
import type { JobProgress } from '../../../src-shared/jobs/types';
import type { RunProgress, RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import type { JobRow } from '../state/jobs-repo';
import { stepsOfTotal } from '../../../src-shared/runs/steps-done';

/** Run states whose members still hold their slots. */
const HOLDING_RUN_STATES = new Set(['waiting', 'running', 'paused']);
/** Run states that want members: planned (and their picks reserved) before pending jobs are placed. */
const WANTING_RUN_STATES = new Set(['waiting', 'paused']);
/** Worker states whose node is shown a verdict for each previewed job (only 'active' ones take work). */
const LIVE_NODE_STATES = new Set(['syncing', 'active', 'draining']);

export interface RoundInputs {
  config: ClusterConfig;
  workers: WorkerSnapshot[];
  /** nvidia-smi free memory per worker, per GPU index, from the latest heartbeats. */
  gpuFree: ReadonlyMap<number, ReadonlyMap<number, number>>;
  /** VRAM measured now per running job (MiB), from the latest heartbeats. */
  measured: ReadonlyMap<string, number>;
  hosts: HostPolicy[];
  /** Claimed and running jobs (what holds slots) and the pending jobs this round looks at, in queue order. */
  rows: JobRow[];
  runs: RunSnapshot[];
  /** Highest VRAM measured for earlier jobs of this model and mode, or null. */
  measuredPeak: (spec: JobSpec) => number | null;
  policy: PlacementPolicy;
  /** Whether a worker found a Python with torch (torchrun runs need it); left out, every worker counts as having it. */
  hasTorch?: (workerId: number) => boolean;
}

export interface RoundResult {
  nodes: NodeCapacity[];
  /** What holds the cluster: placed work, then the members reserved for waiting runs (detail "reserved"). */
  holdings: Holding[];
  placements: JobPlacement[];
  previews: PlacementPreview[];
  /** The plan of each run that wanted members this round, oldest run first. */
  runPlans: { runId: string; plan: MemberPlan }[];
}

export function workerFacts(workers: WorkerSnapshot[], gpuFree: RoundInputs['gpuFree']): WorkerFacts[] {
  return workers.map((w) => ({
    workerId: w.id,
    node: w.node,
    state: w.state,
    gpus: w.gpus,
    cpuCores: w.cpuCores ?? null,
    ramMb: w.ramMb ?? null,
    local: w.local,
    ...(gpuFree.has(w.id) ? { gpuFreeMb: new Map(gpuFree.get(w.id)) } : {}),
  }));
}

/**
 * What placed work holds: each claimed/running job its slot and VRAM on its GPU; each live run member one slot and
 * the whole GPUs it holds (memberHoldings), or — from a coordinator whose snapshots lack them — one GPU-less slot
 * per member worker.
 */
export function currentHoldings(rows: JobRow[], runs: RunSnapshot[], workers: WorkerSnapshot[], measured: RoundInputs['measured'], nodes: readonly NodeCapacity[] = []): Holding[] {
  const holdings: Holding[] = [];
  for (const row of rows) {
    if ((row.status !== 'claimed' && row.status !== 'running') || row.node === null) continue;
    const detail = progressText(row.progress);
    holdings.push({
      node: row.node,
      kind: 'job',
      id: row.id,
      name: row.name,
      gpuIndex: row.gpuIndex,
      vramMb: row.heldVramMb,
      measuredMb: measured.get(row.id) ?? null,
      ...(detail ? { detail } : {}),
    });
  }
  // A worker that is a declared node under another name (capacity.ts) holds under the declared name.
  const nodeOf = new Map(workers.map((w) => [w.id, w.node]));
  for (const n of nodes) if (n.workerId !== null) nodeOf.set(n.workerId, n.node);
  for (const run of runs) {
    if (!HOLDING_RUN_STATES.has(run.state)) continue;
    const members =
      run.memberHoldings ??
      run.workerIds.flatMap((workerId) => {
        const node = nodeOf.get(workerId);
        return node === undefined ? [] : [{ workerId, node, gpuIndices: [] }];
      });
    holdings.push(...runHoldings(run.id, run.spec.name, members, progressText(run.progress)));
  }
  return holdings;
}

/** "step 30 of 60", "step 30" (steps done), or undefined before the first progress line. */
function progressText(progress: JobProgress | RunProgress | null): string | undefined {
  if (!progress) return undefined;
  return `step ${stepsOfTotal(progress.step, progress.totalSteps)}`;
}

/** Runs that want members — waiting, paused, or running below max_workers — oldest first, as plan requests. */
export function wantingRuns(runs: RunSnapshot[]): RunPlanRequest[] {
  return runs
    .filter((r) => WANTING_RUN_STATES.has(r.state) || (r.state === 'running' && r.workerIds.length < r.spec.maxWorkers))
    .sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((r) => ({ runId: r.id, name: r.spec.name, demand: runDemand(r.spec), currentMembers: r.state === 'running' ? [...r.workerIds] : [] }));
}

export function runCandidates(workers: WorkerSnapshot[], hasTorch: RoundInputs['hasTorch']): RunCandidate[] {
  return workers
    .filter((w) => w.state === 'active')
    .map((w) => ({ workerId: w.id, node: w.node, hasTorch: hasTorch ? hasTorch(w.id) : true, joinSeq: w.id }));
}

export function placementRound(input: RoundInputs): RoundResult {
  const nodes = nodeCapacities(input.config, workerFacts(input.workers, input.gpuFree), input.hosts);
  const held = currentHoldings(input.rows, input.runs, input.workers, input.measured, nodes);
  // The same rule as the run controller's (run-fit.ts): disjoint whole GPUs per run, a CPU run's machine alone.
  const { holdings, plans } = reserveForRuns(wantingRuns(input.runs), runCandidates(input.workers, input.hasTorch), { nodes, holdings: held });
  const pending = input.rows
    .filter((row) => row.status === 'pending')
    .map((row) => ({ id: row.id, spec: row.spec, vramMb: jobVramDemandMb(row.spec, input.measuredPeak(row.spec)).mb }));
  // Only live nodes take work or get a verdict: the up to 100 failed workers the coordinator keeps (and declared
  // nodes with no worker) would otherwise add a line per pending job each, for nodes that cannot take any of them.
  const live = nodes.filter((n) => LIVE_NODE_STATES.has(n.state));
  const { placements, previews } = placeJobs(pending, live, holdings, { policy: input.policy });
  return { nodes, holdings, placements, previews, runPlans: plans };
}
