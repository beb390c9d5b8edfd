/**
 * Whether one active worker can be a member of one run, and which whole GPUs it would hold, or the reason it
 * cannot in the words the Runs view shows ("gamma has no CUDA GPU (require_cuda)", "beta holds job r16-lr3e-3
 * (step 30 of 60)"). Every reason starts with the node's name, so a waiting run always says where it looked.
 */
import type { NodeCapacity } from './capacity';
import { MB_PER_GIB } from './demand';
import { formatGib } from './gib';
import { describeHolders, gpusHeldByRuns, holderText, listText } from './holder-text';
import { gpuRemainingMb, type Holding, type NodeUsage } from './holdings';
import type { RunDemand } from './run-demand';

export interface RunCandidate {
  workerId: number;
  node: string;
  /** The worker found a Python with torch at join (torchrun needs it). */
  hasTorch: boolean;
  /** Join order: lower joined earlier (worker ids, assigned at join, serve). */
  joinSeq: number;
  /** A project run: why this worker's project is not ready ("fetching the project: 3.1 of 12.0 MiB"); absent or null: ready. */
  notReady?: string | null;
}

export type MemberFit = { ok: true; gpuIndices: number[] } | { ok: false; reason: string };

const refuse = (reason: string): MemberFit => ({ ok: false, reason });

/** `node` and `usage` are the candidate's node and what others (not this run) hold of it, or undefined if unknown. */
export function memberFit(demand: RunDemand, candidate: RunCandidate, node: NodeCapacity | undefined, usage: NodeUsage | undefined): MemberFit {
  const name = candidate.node;
  if (!node || !usage) return refuse(`${name} is not among the cluster's nodes (no capacity known for it)`);
  if (!node.online) return refuse(`${name} is ${node.state}`);
  if (demand.allowedHosts !== null && !demand.allowedHosts.includes(name)) return refuse(`${name} is not in allowed_hosts`);
  if (demand.needsTorch && !candidate.hasTorch) return refuse(`${name} has no Python with torch`);
  if (demand.requireCuda && node.gpus.length === 0) return refuse(`${name} has no CUDA GPU (require_cuda)`);
  const runs = usage.holders.filter((h) => h.kind === 'run');
  const cpuRun = runs.find((h) => heldGpus(h) === 0);
  if (demand.gpusPerMember === 0 && runs.length > 0) {
    return refuse(`${name} is a member of ${listText(unique(runs).map(holderText))} (a CPU run takes a machine no other run uses)`);
  }
  if (cpuRun) return refuse(`${name} is a member of CPU run ${cpuRun.name}${cpuRun.detail ? ` (${cpuRun.detail})` : ''}`);
  if (usage.slotsHeld >= node.slots) {
    if (usage.holders.length === 0) return refuse(`${name} has no adapter slot (max_adapters ${node.slots})`);
    return refuse(`${name} holds ${describeHolders(usage.holders)}`);
  }
  if (demand.gpusPerMember === 0) return { ok: true, gpuIndices: [] };
  return gpuFit(demand, node, usage);
}

/** The lowest-index GPUs that nothing holds and that have the VRAM asked for, or why there are not enough. */
function gpuFit(demand: RunDemand, node: NodeCapacity, usage: NodeUsage): MemberFit {
  const name = node.node;
  const total = node.gpus.length;
  if (total === 0) return refuse(`${name} has no CUDA GPU (use_gpus)`);
  const need = demand.gpusPerMember === 'all' ? total : demand.gpusPerMember;
  if (total < need) return refuse(`${name} has ${total} GPU${total === 1 ? '' : 's'}, run needs ${need} per member`);
  const needMb = Math.ceil(demand.minVramGib * MB_PER_GIB);
  const free: number[] = [];
  const blocked: { index: number; remainingMb: number; holders: Holding[] }[] = [];
  node.gpus.forEach((gpu, g) => {
    const used = usage.gpus[g]!;
    const remainingMb = gpuRemainingMb(gpu, used);
    if (!used.runHeld && used.holders.length === 0 && remainingMb >= needMb) free.push(gpu.index);
    else blocked.push({ index: gpu.index, remainingMb, holders: used.holders });
  });
  if (free.length >= need) return { ok: true, gpuIndices: free.slice(0, need) };

  if (blocked.length === total && blocked.every((b) => b.holders.some((h) => h.kind === 'run'))) {
    return refuse(`${name}: ${gpusHeldByRuns(node, usage)}`);
  }
  if (blocked.every((b) => b.holders.length > 0)) {
    return refuse(`${name} holds ${describeHolders(blocked.flatMap((b) => b.holders))}`);
  }
  const parts = blocked.map((b) =>
    b.holders.length > 0
      ? `GPU ${b.index} holds ${describeHolders(b.holders)}`
      : `GPU ${b.index} holds ${formatGib(b.remainingMb)} usable, run needs ${formatGib(needMb)}`,
  );
  const short = free.length > 0 ? `${free.length} of ${total} GPUs free, run needs ${need} per member: ` : '';
  return refuse(`${name}: ${short}${parts.join('; ')}`);
}

function heldGpus(h: Holding): number {
  return h.gpuIndices?.length ?? 0;
}

/** Each run once (a holding per member node; the same run may appear on several GPUs). */
function unique(holdings: Holding[]): Holding[] {
  return holdings.filter((h, i) => holdings.findIndex((o) => o.kind === h.kind && o.id === h.id) === i);
}
