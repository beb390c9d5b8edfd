/**
 * Placement of pending adapter jobs on the cluster's slots and GPU budgets. Pure and deterministic: the same
 * jobs, nodes and holdings always give the same placements. Jobs are placed in the order given, each one
 * holding its slot (and VRAM) before the next is looked at, so a batch never overfills a node.
 */
import { DEFAULT_GPU_COST_MODEL, shouldDispatchGpu, type GpuCostModel } from '../cluster/cost-model';
import type { JobSpec, NodeVerdict, PlacementPolicy, PlacementPreview } from '../jobs/types';
import { compareNames, type NodeCapacity } from './capacity';
import { formatGib } from './gib';
import { addHolding, tallyHoldings, type Holding, type NodeUsage } from './holdings';
import { baseRefusal, chooseGpu, isRefusal, type GpuFit, type Refusal } from './node-gate';
import { VerdictMemo } from './verdict-memo';

export interface PendingJob {
  id: string;
  spec: JobSpec;
  /** VRAM it is placed on (jobVramDemandMb). */
  vramMb: number;
}

export interface JobPlacement {
  jobId: string;
  node: string;
  workerId: number;
  gpuIndex: number | null;
  /** VRAM held on that GPU; 0 on a CPU. */
  vramMb: number;
}

export interface PlaceOptions {
  policy?: PlacementPolicy;
  costModel?: GpuCostModel;
  /** Also return a preview for the jobs that were placed (every node's verdict as it stood for them). */
  previewPlaced?: boolean;
}

/**
 * gpu: require_cuda. gpu-then-cpu: prefer_cuda (a CPU anywhere when no GPU fits). cpu-small: prefer_cuda but the
 * 5× PCIe rule says a GPU would not pay off, so a CPU, CPU-only nodes first. cpu: neither flag.
 */
type Plan = 'gpu' | 'gpu-then-cpu' | 'cpu-small' | 'cpu';

export function jobPlan(spec: JobSpec, costModel: GpuCostModel = DEFAULT_GPU_COST_MODEL): Plan {
  if (spec.requireCuda) return 'gpu';
  if (!spec.preferCuda) return 'cpu';
  if (spec.dataMb !== null && spec.mflops !== null && !shouldDispatchGpu(spec.dataMb, spec.mflops, costModel)) return 'cpu-small';
  return 'gpu-then-cpu';
}

export function placeJobs(
  pending: PendingJob[],
  nodes: NodeCapacity[],
  holdings: Holding[],
  opts: PlaceOptions = {},
): { placements: JobPlacement[]; previews: PlacementPreview[] } {
  const spread = opts.policy === 'spread';
  const usage = tallyHoldings(nodes, holdings);
  // Candidates are visited in name order and replaced only by a strictly better one, so ties go to the first name.
  const inNameOrder = nodes.map((_, i) => i).sort((a, b) => compareNames(nodes[a]!.node, nodes[b]!.node));
  const placements: JobPlacement[] = [];
  const previews: PlacementPreview[] = [];
  const memo = new VerdictMemo(nodes);
  // Reused for every job: a round looks at jobs × nodes pairs, and fresh arrays per job were most of its garbage.
  const base: (Refusal | null)[] = new Array(nodes.length);
  const outcomes: (GpuFit | Refusal)[] = new Array(nodes.length);

  for (const job of pending) {
    const plan = jobPlan(job.spec, opts.costModel);
    for (let i = 0; i < nodes.length; i++) base[i] = baseRefusal(job.spec, nodes[i]!, usage[i]!);
    let gpuOutcomes: (GpuFit | Refusal)[] | null = null;
    let chosen: { at: number; gpu: GpuFit | null } | null = null;

    if (plan === 'gpu' || plan === 'gpu-then-cpu') {
      for (let i = 0; i < nodes.length; i++) outcomes[i] = base[i] ?? chooseGpu(nodes[i]!, usage[i]!, job.vramMb, spread);
      gpuOutcomes = outcomes;
      for (const i of inNameOrder) {
        const fit = outcomes[i]!;
        if (isRefusal(fit)) continue;
        const best = chosen?.gpu;
        if (!best || (spread ? fit.remainingMb > best.remainingMb : fit.remainingMb < best.remainingMb)) chosen = { at: i, gpu: fit };
      }
    }
    if (!chosen && plan !== 'gpu') {
      let bestKey = 0;
      for (const i of inNameOrder) {
        if (base[i]) continue;
        const key = cpuKey(nodes[i]!, usage[i]!, spread, plan === 'cpu-small');
        if (!chosen || key < bestKey) {
          chosen = { at: i, gpu: null };
          bestKey = key;
        }
      }
    }

    if (!chosen || opts.previewPlaced) {
      // GPU verdicts when the GPU phase decided: a require_cuda job, or a prefer_cuda job that found a GPU.
      const gpuDecided = gpuOutcomes !== null && (plan === 'gpu' || chosen?.gpu != null);
      const verdicts = nodes.map((node, i) => verdict(job, plan, memo, i, node, usage[i]!, base[i]!, gpuDecided ? gpuOutcomes![i]! : null));
      previews.push({ jobId: job.id, verdicts });
    }
    if (!chosen) continue;
    const node = nodes[chosen.at]!;
    const gpuIndex = chosen.gpu ? node.gpus[chosen.gpu.slot]!.index : null;
    const vramMb = gpuIndex === null ? 0 : job.vramMb;
    placements.push({ jobId: job.id, node: node.node, workerId: node.workerId!, gpuIndex, vramMb });
    addHolding(node, usage[chosen.at]!, { node: node.node, kind: 'job', id: job.id, name: job.spec.name, gpuIndex, vramMb, measuredMb: null });
  }
  return { placements, previews };
}

/** Lower is better: free slots (fewest first for binpack, most first for spread); CPU-only nodes first for cpu-small. */
function cpuKey(node: NodeCapacity, usage: NodeUsage, spread: boolean, cpuOnlyFirst: boolean): number {
  const free = node.slots - usage.slotsHeld;
  const byFree = spread ? -free : free;
  return cpuOnlyFirst && node.gpus.length > 0 ? byFree + 1e9 : byFree;
}

/** One node's verdict as things stand before the job is placed; `gpuOutcome` is given when the job went to a GPU. */
function verdict(
  job: PendingJob,
  plan: Plan,
  memo: VerdictMemo,
  at: number,
  node: NodeCapacity,
  usage: NodeUsage,
  base: Refusal | null,
  gpuOutcome: GpuFit | Refusal | null,
): NodeVerdict {
  const say = (ok: boolean, text: string): NodeVerdict => ({ node: node.node, ok, reason: `${node.node}: ${text}` });
  if (base) return memo.refused(at, base, job.spec);
  if (gpuOutcome) {
    if (!isRefusal(gpuOutcome)) {
      return say(true, `GPU ${node.gpus[gpuOutcome.slot]!.index}, ${formatGib(gpuOutcome.remainingMb - job.vramMb)} left after it`);
    }
    if (plan === 'gpu-then-cpu' && gpuOutcome.code === 'no-cuda') return say(false, 'no NVIDIA GPU (prefer_cuda takes a CPU only when no GPU fits anywhere)');
    return memo.refused(at, gpuOutcome, job.spec);
  }
  const cpu = `CPU, ${node.slots - usage.slotsHeld - 1} of ${node.slots} slots left after it`;
  if (plan === 'cpu-small' && node.gpus.length > 0) return say(true, `${cpu} (5× PCIe rule: too small for a GPU)`);
  if (plan === 'gpu-then-cpu') return say(true, `${cpu} (no GPU fits)`);
  return say(true, cpu);
}
