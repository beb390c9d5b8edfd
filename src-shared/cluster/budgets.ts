/**
 * VRAM reserve budgets and adapter capacity, computed exactly as entrenar does so both tools agree to the MB.
 */
import type { ClusterConfig, GpuConfig, MemoryType, NodeConfig } from './types';

/**
 * Fraction of a GPU's memory a training run may plan to use. The rest is headroom for the CUDA context,
 * fragmentation and, on unified memory, the operating system that shares it.
 */
export const RESERVE_FACTORS: Readonly<Record<MemoryType, number>> = Object.freeze({
  discrete: 0.85,
  unified: 0.6,
});

/**
 * entrenar stores the factor as an f32 and widens it to f64 before multiplying, so the factor it really
 * uses is fround(0.85) = 0.8500000238418579…, not 0.85. Using the same widened value keeps every budget
 * bit-identical to entrenar's: for example 2097167 MB gives 1782592 there, while plain 0.85 would give 1782591.
 */
function effectiveFactor(memoryType: MemoryType): number {
  return Math.fround(RESERVE_FACTORS[memoryType]);
}

/** Usable MB of one GPU: floor(vram_mb × factor), as entrenar's `as u64` truncation does for non-negative values. */
export function gpuUsableMb(gpu: GpuConfig): number {
  return Math.floor(gpu.vram_mb * effectiveFactor(gpu.memory_type));
}

export function nodeTotalVramMb(node: NodeConfig): number {
  let total = 0;
  for (const gpu of node.gpus) total += gpu.vram_mb;
  return total;
}

/** Sum of the per-GPU floors (not the floor of the sum), matching entrenar. */
export function nodeUsableVramMb(node: NodeConfig): number {
  let total = 0;
  for (const gpu of node.gpus) total += gpuUsableMb(gpu);
  return total;
}

export function clusterUsableVramMb(config: ClusterConfig): number {
  let total = 0;
  for (const node of config.nodes) total += nodeUsableVramMb(node);
  return total;
}

export function clusterTotalVramMb(config: ClusterConfig): number {
  let total = 0;
  for (const node of config.nodes) total += nodeTotalVramMb(node);
  return total;
}

/** How many adapters the cluster can train at once: the sum of every node's max_adapters. */
export function totalAdapterSlots(config: ClusterConfig): number {
  let total = 0;
  for (const node of config.nodes) total += node.max_adapters;
  return total;
}

export function findNode(config: ClusterConfig, name: string): NodeConfig | undefined {
  return config.nodes.find((node) => node.name === name);
}

export function isCpuOnly(node: NodeConfig): boolean {
  return node.gpus.length === 0;
}

export const MB_PER_SUGGESTED_ADAPTER = 8192;
export const MAX_SUGGESTED_ADAPTERS = 8;

/**
 * The max_adapters add-this-machine suggests, and the slots an undeclared worker gets: one per 8 GiB of usable
 * memory (summed per-GPU floors), clamped to 1..8; a CPU-only machine gets 1.
 */
export function suggestedMaxAdapters(gpus: GpuConfig[]): number {
  if (gpus.length === 0) return 1;
  const usable = gpus.reduce((sum, g) => sum + gpuUsableMb(g), 0);
  return Math.min(MAX_SUGGESTED_ADAPTERS, Math.max(1, Math.floor(usable / MB_PER_SUGGESTED_ADAPTER)));
}
