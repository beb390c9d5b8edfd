/**
 * What placed work holds of each node: a slot per job or elastic run, and a job's VRAM on one GPU. Placement
 * and the ledger both count from the same tally, so the cards show exactly what the scheduler sees.
 */
import type { GpuCapacity, NodeCapacity } from './capacity';

export interface Holding {
  node: string;
  kind: 'job' | 'run';
  id: string;
  name: string;
  /** The GPU (index on its node) a job holds; null for CPU jobs and elastic runs. */
  gpuIndex: number | null;
  vramMb: number;
  /** What nvidia-smi measured for it; null/absent when not (yet) measured. */
  measuredMb?: number | null;
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
}

export interface NodeUsage {
  slotsHeld: number;
  /** Parallel to the node's `gpus`. */
  gpus: GpuUsage[];
  holders: Holding[];
}

/** One usage per node, parallel to `nodes`; holdings on nodes or GPUs not listed count nowhere (or only as a slot). */
export function tallyHoldings(nodes: NodeCapacity[], holdings: Holding[]): NodeUsage[] {
  const usage = nodes.map((n) => ({ slotsHeld: 0, gpus: n.gpus.map(() => ({ heldMb: 0, unusedHeldMb: 0, measuredMb: null })), holders: [] }) as NodeUsage);
  const at = new Map(nodes.map((n, i) => [n.node, i]));
  for (const h of holdings) {
    const i = at.get(h.node);
    if (i !== undefined) addHolding(nodes[i]!, usage[i]!, h);
  }
  return usage;
}

export function addHolding(node: NodeCapacity, usage: NodeUsage, h: Holding): void {
  usage.slotsHeld += 1;
  usage.holders.push(h);
  if (h.gpuIndex === null) return;
  const g = node.gpus.findIndex((gpu) => gpu.index === h.gpuIndex);
  if (g < 0) return;
  const gpu = usage.gpus[g]!;
  gpu.heldMb += h.vramMb;
  const measured = typeof h.measuredMb === 'number' ? h.measuredMb : null;
  if (measured !== null) gpu.measuredMb = (gpu.measuredMb ?? 0) + measured;
  gpu.unusedHeldMb += Math.max(0, h.vramMb - (measured ?? 0));
}

/**
 * VRAM a GPU can still take: its usable reserve less what is held, and never more than nvidia-smi's free memory
 * less what placed work holds but does not use yet (so a job claimed between two heartbeats, or one still
 * loading, is not promised to the next job too). Never below 0.
 */
export function gpuRemainingMb(gpu: GpuCapacity, usage: GpuUsage): number {
  const byBudget = gpu.usableMb - usage.heldMb;
  const byFree = gpu.freeMb === null ? Infinity : gpu.freeMb - usage.unusedHeldMb;
  return Math.max(0, Math.min(byBudget, byFree));
}
