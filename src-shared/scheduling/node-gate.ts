/**
 * Whether one node can take one job, and the reason when it cannot, in the words the Jobs view and the API show
 * ("jetson: needs 16 GiB VRAM, 4.8 GiB usable left"). Checks return small values; text is made only for the
 * previews that are shown, because placing 1,000 jobs over 100 nodes refuses most pairs.
 */
import type { JobSpec } from '../jobs/types';
import type { NodeCapacity } from './capacity';
import { MB_PER_GIB } from './demand';
import { formatGib } from './gib';
import { gpuRemainingMb, type NodeUsage } from './holdings';
import { describeHolders, gpusHeldByRuns } from './holder-text';

export type Refusal =
  | { code: 'not-online' }
  | { code: 'allowed-hosts' }
  | { code: 'denied' }
  | { code: 'allow-only'; allowed: string[] }
  | { code: 'slots'; usage: NodeUsage }
  | { code: 'ram' }
  | { code: 'cores' }
  | { code: 'no-cuda' }
  | { code: 'vram'; needMb: number; bestLeftMb: number }
  | { code: 'run-gpus'; usage: NodeUsage };

const NOT_ONLINE: Refusal = { code: 'not-online' };
const ALLOWED_HOSTS: Refusal = { code: 'allowed-hosts' };
const DENIED: Refusal = { code: 'denied' };
const RAM: Refusal = { code: 'ram' };
const CORES: Refusal = { code: 'cores' };
export const NO_CUDA: Refusal = { code: 'no-cuda' };

/**
 * What every placement needs, GPU or CPU: an active worker, the job's allowed_hosts, the node's [[hosts]] policy
 * (deny first; names match the job's name or its model), a free slot, and enough RAM and cores where the node's
 * are known (unknown is not held against it: detection may simply not have reported them).
 */
export function baseRefusal(spec: JobSpec, node: NodeCapacity, usage: NodeUsage): Refusal | null {
  if (!node.online) return NOT_ONLINE;
  if (spec.allowedHosts !== null && !spec.allowedHosts.includes(node.node)) return ALLOWED_HOSTS;
  const policy = node.policy;
  if (policy) {
    if (policy.denyJobs.includes(spec.name) || policy.denyJobs.includes(spec.model)) return DENIED;
    if (policy.allowJobs !== null && !policy.allowJobs.includes(spec.name) && !policy.allowJobs.includes(spec.model)) {
      return { code: 'allow-only', allowed: policy.allowJobs };
    }
  }
  if (node.ramMb !== null && node.ramMb < spec.minRamGib * MB_PER_GIB) return RAM;
  if (node.cpuCores !== null && node.cpuCores < spec.minCores) return CORES;
  // What can never change while the node is as it is goes before what frees up (held slots), so a CUDA-only job
  // on a CPU-only node says that, not "slots held".
  if (spec.requireCuda && node.gpus.length === 0) return NO_CUDA;
  if (usage.slotsHeld >= node.slots) return { code: 'slots', usage };
  return null;
}

/** Refusals that waiting does not cure: the node or the job has to change (held slots, VRAM and GPUs free up). */
export function isPermanent(r: Refusal): boolean {
  return r.code === 'allowed-hosts' || r.code === 'denied' || r.code === 'allow-only' || r.code === 'ram' || r.code === 'cores' || r.code === 'no-cuda';
}

export interface GpuFit {
  /** Position in the node's `gpus`. */
  slot: number;
  remainingMb: number;
}

/**
 * The GPU of this node the job would take: among those with `needMb` remaining and no run member holding them,
 * the one with the least remaining (binpack) or the most (spread), the lower index on a tie. Refused with the
 * best GPU's remaining budget otherwise, or with the runs that hold every GPU.
 */
export function chooseGpu(node: NodeCapacity, usage: NodeUsage, needMb: number, spread: boolean): GpuFit | Refusal {
  if (node.gpus.length === 0) return NO_CUDA;
  let best: GpuFit | null = null;
  let bestLeftMb = 0;
  let runHeld = 0;
  for (let slot = 0; slot < node.gpus.length; slot++) {
    if (usage.gpus[slot]!.runHeld) {
      runHeld++;
      continue;
    }
    const remainingMb = gpuRemainingMb(node.gpus[slot]!, usage.gpus[slot]!);
    if (remainingMb > bestLeftMb) bestLeftMb = remainingMb;
    if (remainingMb < needMb) continue;
    if (!best || (spread ? remainingMb > best.remainingMb : remainingMb < best.remainingMb)) best = { slot, remainingMb };
  }
  if (best) return best;
  return runHeld === node.gpus.length ? { code: 'run-gpus', usage } : { code: 'vram', needMb, bestLeftMb };
}

export function isRefusal(x: GpuFit | Refusal): x is Refusal {
  return 'code' in x;
}

/** The reason text, without the node's name in front. */
export function describeRefusal(r: Refusal, spec: JobSpec, node: NodeCapacity): string {
  switch (r.code) {
    case 'not-online':
      return node.state;
    case 'allowed-hosts':
      return "not in the job's allowed_hosts";
    case 'denied':
      return `[[hosts]] denies ${spec.name}`;
    case 'allow-only':
      return `[[hosts]] allows only ${r.allowed.length > 0 ? r.allowed.join(', ') : 'no jobs'}`;
    case 'slots':
      if (node.slots === 0) return 'has no adapter slot (max_adapters 0)';
      return `all ${node.slots} adapter slot${node.slots === 1 ? '' : 's'} held, by ${describeHolders(r.usage.holders)}`;
    case 'ram':
      return `needs ${formatGib(spec.minRamGib * MB_PER_GIB)} RAM, has ${formatGib(node.ramMb ?? 0)}`;
    case 'cores':
      return `needs ${spec.minCores} cores, has ${node.cpuCores ?? 0}`;
    case 'no-cuda':
      return 'needs CUDA, has no NVIDIA GPU';
    case 'vram':
      return `needs ${formatGib(r.needMb)} VRAM, ${formatGib(r.bestLeftMb)} usable left`;
    case 'run-gpus':
      return gpusHeldByRuns(node, r.usage);
  }
}
