/**
 * What each node can hold: cluster.yaml's declaration intersected with what its worker detected, the stricter
 * of the two winning (as the training fleet's capability gate does). One resource model for jobs and elastic runs:
 * adapter slots per node and, per GPU, its usable reserve.
 */
import { sameGpus } from '../nodes/node-status';
import { gpuUsableMb, suggestedMaxAdapters } from '../cluster/budgets';
import type { ClusterConfig, GpuConfig, MemoryType, NodeConfig } from '../cluster/types';
import type { HostPolicy } from '../jobs/types';
import type { WorkerGpu, WorkerState } from '../training';

export interface WorkerFacts {
  workerId: number;
  node: string;
  state: WorkerState;
  gpus: WorkerGpu[];
  cpuCores: number | null;
  ramMb: number | null;
  /** nvidia-smi free memory by GPU index, from the latest heartbeat; absent = unknown. */
  gpuFreeMb?: Map<number, number>;
}

export interface GpuCapacity {
  /** The GPU's index on its node as the worker reported it (what CUDA_VISIBLE_DEVICES names). */
  index: number;
  uuid: string | null;
  name: string;
  memoryType: MemoryType;
  totalMb: number;
  usableMb: number;
  freeMb: number | null;
}

export interface NodeCapacity {
  node: string;
  workerId: number | null;
  online: boolean;
  /** The worker's state, or 'offline' when the node has no worker. */
  state: string;
  declared: boolean;
  slots: number;
  cuda: boolean;
  cpuCores: number | null;
  ramMb: number | null;
  gpus: GpuCapacity[];
  policy: HostPolicy | null;
}

/**
 * One entry per declared node (file order), then one per undeclared node name that has a worker (name order).
 * A node's worker is its newest active one, else its newest of any state; workers that left do not count.
 * Stricter wins: slots are the declared max_adapters (for an undeclared worker, what add-this-machine would
 * suggest); a GPU counts only if the file and the worker both have it (matched by uuid, else by position), with
 * the smaller memory and usable reserve of the two; cores and RAM are the smaller when both are known.
 * With no worker the declaration stands as written: such a node is offline and takes no work anyway.
 */
export function nodeCapacities(config: ClusterConfig, workers: WorkerFacts[], hosts: HostPolicy[]): NodeCapacity[] {
  const byName = currentWorkers(workers);
  const policyOf = (name: string) => hosts.find((h) => h.name === name) ?? null;
  const declared = new Set(config.nodes.map((n) => n.name));
  // A worker under another name whose GPUs are exactly a declared node's is that node (as the Nodes view shows it).
  const claimedByGpus = new Set<string>();
  const workerOf = (node: NodeConfig): WorkerFacts | null => {
    const named = byName.get(node.name);
    if (named) return named;
    const twin = [...byName.values()].find((w) => !declared.has(w.node) && !claimedByGpus.has(w.node) && sameGpus(node, w));
    if (twin) claimedByGpus.add(twin.node);
    return twin ?? null;
  };
  const out: NodeCapacity[] = config.nodes.map((node) => declaredCapacity(node, workerOf(node), policyOf(node.name)));
  const undeclared = [...byName.values()].filter((w) => !declared.has(w.node) && !claimedByGpus.has(w.node)).sort((a, b) => compareNames(a.node, b.node));
  for (const worker of undeclared) out.push(undeclaredCapacity(worker, policyOf(worker.node)));
  return out;
}

export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function currentWorkers(workers: WorkerFacts[]): Map<string, WorkerFacts> {
  const byName = new Map<string, WorkerFacts>();
  for (const w of workers) {
    if (w.state === 'left') continue;
    const seen = byName.get(w.node);
    if (!seen || rank(w) > rank(seen)) byName.set(w.node, w);
  }
  return byName;
}

/** Active beats any other state; then the newer worker (ids are assigned at join and never reused). */
function rank(w: WorkerFacts): number {
  return (w.state === 'active' ? 2 ** 40 : 0) + w.workerId;
}

function declaredCapacity(node: NodeConfig, worker: WorkerFacts | null, policy: HostPolicy | null): NodeCapacity {
  const gpus = worker ? intersectGpus(node.gpus, worker) : node.gpus.map((g, i) => declaredOnlyGpu(g, i));
  return {
    ...presence(node.name, worker, policy),
    declared: true,
    slots: node.max_adapters,
    cuda: gpus.length > 0,
    cpuCores: smaller(node.cpu_cores ?? null, worker?.cpuCores ?? null),
    ramMb: smaller(node.ram_mb ?? null, worker?.ramMb ?? null),
    gpus,
  };
}

function undeclaredCapacity(worker: WorkerFacts, policy: HostPolicy | null): NodeCapacity {
  const gpus: GpuCapacity[] = [];
  worker.gpus.forEach((g, index) => {
    if (g.vramTotalMb !== null && g.vramTotalMb > 0) gpus.push(detectedGpu(g, index, worker));
  });
  const asConfig: GpuConfig[] = gpus.map((g) => ({ uuid: g.uuid ?? String(g.index), type: g.name, vram_mb: g.totalMb, memory_type: g.memoryType }));
  return {
    ...presence(worker.node, worker, policy),
    declared: false,
    slots: suggestedMaxAdapters(asConfig),
    cuda: gpus.length > 0,
    cpuCores: worker.cpuCores,
    ramMb: worker.ramMb,
    gpus,
  };
}

function presence(node: string, worker: WorkerFacts | null, policy: HostPolicy | null) {
  return { node, workerId: worker?.workerId ?? null, online: worker?.state === 'active', state: worker?.state ?? 'offline', policy };
}

/**
 * Declared GPUs the worker also reported: uuid matches first, then the remaining ones pair up by position.
 * Workers report only NVIDIA GPUs (the agent's join filters on vendor), so every counted GPU is a CUDA one.
 */
function intersectGpus(declared: GpuConfig[], worker: WorkerFacts): GpuCapacity[] {
  const pairedWith = new Map<number, GpuConfig>(); // detected index → declared GPU
  const unpaired: GpuConfig[] = [];
  for (const d of declared) {
    const index = worker.gpus.findIndex((g, i) => g.uuid === d.uuid && !pairedWith.has(i));
    if (index >= 0) pairedWith.set(index, d);
    else unpaired.push(d);
  }
  for (const d of unpaired) {
    const position = declared.indexOf(d);
    if (position < worker.gpus.length && !pairedWith.has(position)) pairedWith.set(position, d);
  }
  return [...pairedWith.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, d]) => stricterGpu(d, worker.gpus[index]!, index, worker));
}

function stricterGpu(declared: GpuConfig, detected: WorkerGpu, index: number, worker: WorkerFacts): GpuCapacity {
  const fromFile = declaredOnlyGpu(declared, index);
  if (detected.vramTotalMb === null || detected.vramTotalMb <= 0) return { ...fromFile, freeMb: freeOf(worker, index) };
  const seen = detectedGpu(detected, index, worker);
  return {
    index,
    uuid: detected.uuid ?? declared.uuid,
    name: detected.name || declared.type,
    memoryType: fromFile.memoryType === 'unified' || seen.memoryType === 'unified' ? 'unified' : 'discrete',
    totalMb: Math.min(fromFile.totalMb, seen.totalMb),
    usableMb: Math.min(fromFile.usableMb, seen.usableMb),
    freeMb: seen.freeMb,
  };
}

function declaredOnlyGpu(g: GpuConfig, index: number): GpuCapacity {
  return { index, uuid: g.uuid, name: g.type, memoryType: g.memory_type, totalMb: g.vram_mb, usableMb: gpuUsableMb(g), freeMb: null };
}

function detectedGpu(g: WorkerGpu, index: number, worker: WorkerFacts): GpuCapacity {
  const memoryType = g.memoryType ?? 'discrete';
  const totalMb = Math.round(g.vramTotalMb ?? 0);
  const usableMb = gpuUsableMb({ uuid: g.uuid ?? '', type: g.name, vram_mb: totalMb, memory_type: memoryType });
  return { index, uuid: g.uuid, name: g.name, memoryType, totalMb, usableMb, freeMb: freeOf(worker, index) };
}

function freeOf(worker: WorkerFacts, index: number): number | null {
  return worker.gpuFreeMb?.get(index) ?? null;
}

function smaller(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
