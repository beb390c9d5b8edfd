/**
 * One placement round: what the cluster offers (cluster.yaml ∩ what each worker detected), what holds it now
 * (claimed and running jobs, the live run's members), and which pending jobs go where. Pure apart from its
 * inputs, so the service can run it whenever something changed. The service hands it only the head of the
 * queue (PLACEMENT_WINDOW pending jobs), so a round costs the same for 300 jobs as for 10,000.
 */
import type { ClusterConfig } from '../../../src-shared/cluster/types';
import type { HostPolicy, JobSpec, PlacementPolicy, PlacementPreview } from '../../../src-shared/jobs/types';
import { nodeCapacities, type NodeCapacity, type WorkerFacts } from '../../../src-shared/scheduling/capacity';
import { jobVramDemandMb } from '../../../src-shared/scheduling/demand';
import type { Holding } from '../../../src-shared/scheduling/holdings';
import { placeJobs, type JobPlacement } from '../../../src-shared/scheduling/place-jobs';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import type { JobRow } from '../state/jobs-repo';

/** Run states whose members still hold their slots. */
const HOLDING_RUN_STATES = new Set(['waiting', 'running', 'paused']);
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
}

export interface RoundResult {
  nodes: NodeCapacity[];
  holdings: Holding[];
  placements: JobPlacement[];
  previews: PlacementPreview[];
}

export function workerFacts(workers: WorkerSnapshot[], gpuFree: RoundInputs['gpuFree']): WorkerFacts[] {
  return workers.map((w) => ({
    workerId: w.id,
    node: w.node,
    state: w.state,
    gpus: w.gpus,
    cpuCores: w.cpuCores ?? null,
    ramMb: w.ramMb ?? null,
    ...(gpuFree.has(w.id) ? { gpuFreeMb: new Map(gpuFree.get(w.id)) } : {}),
  }));
}

/** What placed work holds: each claimed/running job its slot and VRAM, each live run member one slot. */
export function currentHoldings(rows: JobRow[], runs: RunSnapshot[], workers: WorkerSnapshot[], measured: RoundInputs['measured']): Holding[] {
  const holdings: Holding[] = [];
  for (const row of rows) {
    if ((row.status !== 'claimed' && row.status !== 'running') || row.node === null) continue;
    holdings.push({ node: row.node, kind: 'job', id: row.id, name: row.name, gpuIndex: row.gpuIndex, vramMb: row.heldVramMb, measuredMb: measured.get(row.id) ?? null });
  }
  const nodeOf = new Map(workers.map((w) => [w.id, w.node]));
  for (const run of runs) {
    if (!HOLDING_RUN_STATES.has(run.state)) continue;
    for (const workerId of run.workerIds) {
      const node = nodeOf.get(workerId);
      if (node !== undefined) holdings.push({ node, kind: 'run', id: run.id, name: run.spec.name, gpuIndex: null, vramMb: 0 });
    }
  }
  return holdings;
}

export function placementRound(input: RoundInputs): RoundResult {
  const nodes = nodeCapacities(input.config, workerFacts(input.workers, input.gpuFree), input.hosts);
  const holdings = currentHoldings(input.rows, input.runs, input.workers, input.measured);
  const pending = input.rows
    .filter((row) => row.status === 'pending')
    .map((row) => ({ id: row.id, spec: row.spec, vramMb: jobVramDemandMb(row.spec, input.measuredPeak(row.spec)).mb }));
  // Only live nodes take work or get a verdict: the up to 100 failed workers the coordinator keeps (and declared
  // nodes with no worker) would otherwise add a line per pending job each, for nodes that cannot take any of them.
  const live = nodes.filter((n) => LIVE_NODE_STATES.has(n.state));
  const { placements, previews } = placeJobs(pending, live, holdings, { policy: input.policy });
  return { nodes, holdings, placements, previews };
}
