/**
 * What placed work holds of each node: a slot per job or run member, a job's VRAM on one GPU, and a run member's
 * whole GPUs. Placement of jobs, the planning of run generations and the ledger all count from the same tally,
 * so the cards show exactly what the scheduler sees.
 */
import type { GpuCapacity, NodeCapacity } from './capacity';

export interface Holding {
  node: string;
  kind: 'job' | 'run';
  id: string;
  name: string;
  /** The GPU (index on its node) a job holds; null for CPU jobs and for run members (see gpuIndices). */
  gpuIndex: number | null;
  /**
   * Whole GPUs (indices on its node) a run member holds: each counts as fully used, so no job and no other run
   * member is put on it. Absent or empty for jobs and CPU run members.
   */
  gpuIndices?: number[];
  vramMb: number;
  /** What nvidia-smi measured for it; null/absent when not (yet) measured. */
  measuredMb?: number | null;
  /** What it is doing, for the reasons that quote it ("step 30 of 60", "reserved"). */
  detail?: string;
}

export interface GpuUsage {
  heldMb: number;
  /**
   * Held but not (yet) in use as nvidia-smi measured it (held − measured, per holder, from 0): memory the GPU's
   * reported free figure still contains, though placed work may grow into it.
   */
  unusedHeldMb: number;
  /** Sum of what was measured for the holders; null when none was. */
  measuredMb: number | null;
  /** A run member holds this whole GPU: nothing else may be placed on it, whatever its VRAM figures say. */
  runHeld: boolean;
  /** Every holding on this GPU (jobs on it, the run member that holds it). */
  holders: Holding[];
}

export interface NodeUsage {
  slotsHeld: number;
  /** Parallel to the node's `gpus`. */
  gpus: GpuUsage[];
  holders: Holding[];
}

/** The GPUs a holding sits on: a run member's gpuIndices, else a job's gpuIndex. */
export function heldGpuIndices(h: Holding): readonly number[] {
  if (h.gpuIndices && h.gpuIndices.length > 0) return h.gpuIndices;
  return h.gpuIndex === null ? [] : [h.gpuIndex];
}

export function emptyUsage(node: NodeCapacity): NodeUsage {
  return { slotsHeld: 0, gpus: node.gpus.map(() => ({ heldMb: 0, unusedHeldMb: 0, measuredMb: null, runHeld: false, holders: [] })), holders: [] };
}

/** One usage per node, parallel to `nodes`; holdings on nodes or GPUs not listed count nowhere (or only as a slot). */
export function tallyHoldings(nodes: NodeCapacity[], holdings: Holding[]): NodeUsage[] {
  const usage = nodes.map(emptyUsage);
  const at = new Map(nodes.map((n, i) => [n.node, i]));
  for (const h of holdings) {
    const i = at.get(h.node);
    if (i !== undefined) addHolding(nodes[i]!, usage[i]!, h);
  }
  return usage;
}

/**
 * Adds one holding: its slot, and per GPU either a job's VRAM or, for a run member, the GPU's whole usable
 * reserve (a member's training may use all of it, so no job's figures are trusted to fit beside it).
 */
export function addHolding(node: NodeCapacity, usage: NodeUsage, h: Holding): void {
  usage.slotsHeld += 1;
  usage.holders.push(h);
  const whole = h.kind === 'run';
  for (const index of heldGpuIndices(h)) {
    const g = node.gpus.findIndex((gpu) => gpu.index === index);
    if (g < 0) continue;
    const gpu = usage.gpus[g]!;
    gpu.holders.push(h);
    if (whole) {
      gpu.runHeld = true;
      gpu.heldMb += node.gpus[g]!.usableMb;
      continue;
    }
    gpu.heldMb += h.vramMb;
    const measured = typeof h.measuredMb === 'number' ? h.measuredMb : null;
    if (measured !== null) gpu.measuredMb = (gpu.measuredMb ?? 0) + measured;
    gpu.unusedHeldMb += Math.max(0, h.vramMb - (measured ?? 0));
  }
}

/**
 * VRAM a GPU can still take: its usable reserve less what is held, and never more than nvidia-smi's free memory
 * less what placed work holds but does not use yet (so a job claimed between two heartbeats, or one still
 * loading, is not promised to the next job too). Never below 0; 0 on a GPU a run member holds.
 */
export function gpuRemainingMb(gpu: GpuCapacity, usage: GpuUsage): number {
  if (usage.runHeld) return 0;
  const byBudget = gpu.usableMb - usage.heldMb;
  const byFree = gpu.freeMb === null ? Infinity : gpu.freeMb - usage.unusedHeldMb;
  return Math.max(0, Math.min(byBudget, byFree));
}
