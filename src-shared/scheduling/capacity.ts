/**
 * What each node can hold: cluster.yaml's declaration intersected with what its worker detected, the stricter
 * of the two winning (as the training fleet's capability gate does). One resource model for jobs and elastic runs:
 * adapter slots per node and, per GPU, its usable reserve.
 */
import { pointsAtThisMachine } from '../cluster/this-machine';
import { sameGpus } from '../nodes/node-status';
import { pairGpus } from './gpu-pairing';
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
  /** The worker that runs inside the app (or serve) itself: it is the node pointing at this machine. */
  local?: boolean;
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
  const matched = declaredWorkers(config, byName);
  const claimed = new Set(matched.flatMap((w) => (w ? [w.node] : [])));
  const out: NodeCapacity[] = config.nodes.map((node, i) => declaredCapacity(node, matched[i] ?? null, policyOf(node.name)));
  const undeclared = [...byName.values()].filter((w) => !declared.has(w.node) && !claimed.has(w.node)).sort((a, b) => compareNames(a.node, b.node));
  for (const worker of undeclared) out.push(undeclaredCapacity(worker, policyOf(worker.node)));
  return out;
}

/**
 * Each declared node's worker, as the Nodes view matches them (node-status.ts matchWorkers): by name; else a
 * worker under another name whose GPUs are exactly the node's; else, for a node pointing at this machine
 * (localhost, its hostname), the app's own worker. So one machine is one node: its declared slots and budgets
 * apply to the worker that is it, and its jobs and run members are placed under the declared name.
 */
function declaredWorkers(config: ClusterConfig, byName: Map<string, WorkerFacts>): (WorkerFacts | null)[] {
  const declared = new Set(config.nodes.map((n) => n.name));
  const claimed = new Set<string>();
  const free = (w: WorkerFacts) => !declared.has(w.node) && !claimed.has(w.node);
  const claim = (w: WorkerFacts | undefined): WorkerFacts | null => {
    if (!w) return null;
    claimed.add(w.node);
    return w;
  };
  const matched = config.nodes.map((node) => byName.get(node.name) ?? null);
  config.nodes.forEach((node, i) => {
    if (!matched[i]) matched[i] = claim([...byName.values()].find((w) => free(w) && sameGpus(node, w)));
  });
  config.nodes.forEach((node, i) => {
    if (matched[i]) return;
    const own = [...byName.values()].filter((w) => w.local && free(w)).sort((a, b) => rank(b) - rank(a))[0];
    if (own && pointsAtThisMachine(node.host, own.node)) matched[i] = claim(own);
  });
  return matched;
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
 * Declared GPUs the worker also reported (gpu-pairing.ts). Workers report only NVIDIA GPUs (the agent's join
 * filters on vendor), so every counted GPU is a CUDA one.
 */
function intersectGpus(declared: GpuConfig[], worker: WorkerFacts): GpuCapacity[] {
  return pairGpus(declared, worker.gpus).map(([index, d]) => stricterGpu(d, worker.gpus[index]!, index, worker));
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
