/**
 * Which declared GPU (cluster.yaml) is which GPU a worker reported: UUID matches first, then the remaining ones
 * pair up by position. One rule for what a node can hold (capacity.ts) and what the header counts online
 * (nodes/node-status.ts): a declared GPU no worker reported is not online.
 */
import { gpuUsableMb } from '../cluster/budgets';
import type { GpuConfig } from '../cluster/types';
import type { WorkerGpu } from '../training';

/** Reported index → the declared GPU it is, by reported index. */
export function pairGpus(declared: readonly GpuConfig[], reported: readonly Pick<WorkerGpu, 'uuid'>[]): [number, GpuConfig][] {
  const pairedWith = new Map<number, GpuConfig>();
  const unpaired: GpuConfig[] = [];
  for (const d of declared) {
    const index = reported.findIndex((g, i) => g.uuid === d.uuid && !pairedWith.has(i));
    if (index >= 0) pairedWith.set(index, d);
    else unpaired.push(d);
  }
  for (const d of unpaired) {
    const position = declared.indexOf(d);
    if (position < reported.length && !pairedWith.has(position)) pairedWith.set(position, d);
  }
  return [...pairedWith.entries()].sort((a, b) => a[0] - b[0]);
}

/** Usable MB of the declared GPUs the worker reported, each the smaller of the file's and the detected budget. */
export function reportedUsableMb(declared: readonly GpuConfig[], reported: readonly WorkerGpu[]): number {
  let sum = 0;
  for (const [index, d] of pairGpus(declared, reported)) {
    const g = reported[index]!;
    const fromFile = gpuUsableMb(d);
    const total = g.vramTotalMb === null || g.vramTotalMb <= 0 ? null : Math.round(g.vramTotalMb);
    sum += total === null ? fromFile : Math.min(fromFile, gpuUsableMb({ uuid: g.uuid ?? '', type: g.name, vram_mb: total, memory_type: g.memoryType ?? 'discrete' }));
  }
  return sum;
}
