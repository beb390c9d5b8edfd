/**
 * Combining clusters and keeping "this machine" up to date in one: a dropped file merges node by node,
 * and Add this machine updates the entry that already describes this computer instead of adding a twin.
 */
import { isLoopbackHost } from './loopback';
import { pointsAtThisMachine } from './this-machine';
import type { ClusterConfig, ClusterIssue, GpuConfig, NodeConfig } from './types';

function cloneGpu(gpu: GpuConfig): GpuConfig {
  return { uuid: gpu.uuid, type: gpu.type, vram_mb: gpu.vram_mb, memory_type: gpu.memory_type };
}

/** A deep copy holding only cluster.yaml's fields, so results never share objects with their inputs. */
export function cloneNode(node: NodeConfig): NodeConfig {
  const copy: NodeConfig = {
    name: node.name,
    host: node.host,
    transport: node.transport,
    gpus: node.gpus.map(cloneGpu),
    max_adapters: node.max_adapters,
  };
  if (node.user !== undefined) copy.user = node.user;
  if (node.cpu_cores !== undefined) copy.cpu_cores = node.cpu_cores;
  if (node.ram_mb !== undefined) copy.ram_mb = node.ram_mb;
  return copy;
}

export function cloneCluster(config: ClusterConfig): ClusterConfig {
  return { nodes: config.nodes.map(cloneNode) };
}

/** Whether two nodes say the same thing in cluster.yaml (field order and extra properties aside). */
export function sameNode(a: NodeConfig, b: NodeConfig): boolean {
  return JSON.stringify(cloneNode(a)) === JSON.stringify(cloneNode(b));
}

export function sameCluster(a: ClusterConfig, b: ClusterConfig): boolean {
  return a.nodes.length === b.nodes.length && a.nodes.every((n, i) => sameNode(n, b.nodes[i]!));
}

/** Incoming nodes replace same-named nodes where they stand; the others are appended in incoming order. */
export function mergeClusters(
  current: ClusterConfig,
  incoming: ClusterConfig,
): { config: ClusterConfig; added: string[]; updated: string[] } {
  const nodes = current.nodes.map(cloneNode);
  const added: string[] = [];
  const updated: string[] = [];
  for (const node of incoming.nodes) {
    const at = nodes.findIndex((n) => n.name === node.name);
    if (at === -1) {
      nodes.push(cloneNode(node));
      added.push(node.name);
    } else {
      nodes[at] = cloneNode(node);
      if (!updated.includes(node.name)) updated.push(node.name);
    }
  }
  return { config: { nodes }, added, updated };
}

/**
 * The node that describes this machine: the first sharing a GPU UUID with it (UUIDs are unique per GPU,
 * so this survives renames), else one named like it that points at this machine (a loopback host, or a
 * host equal to its name), else a loopback node named `name-N` (what upsertMachineNode calls this machine
 * when its name was taken), else any node that points at this machine under another name (an imported
 * cluster's `desktop` at localhost: issue 25, Add this machine added a second node for it). A same-named
 * node on another host is a different machine.
 */
export function findMachineNode(config: ClusterConfig, machine: NodeConfig): NodeConfig | null {
  const uuids = new Set(machine.gpus.map((g) => g.uuid));
  if (uuids.size > 0) {
    const byGpu = config.nodes.find((n) => n.gpus.some((g) => uuids.has(g.uuid)));
    if (byGpu) return byGpu;
  }
  const name = machine.name.toLowerCase();
  return (
    config.nodes.find(
      (n) => n.name.toLowerCase() === name && (isLoopbackHost(n.host) || n.host.trim().toLowerCase() === name),
    ) ??
    config.nodes.find((n) => n.host.trim().toLowerCase() === name) ??
    config.nodes.find((n) => isLoopbackHost(n.host) && isNumberedName(n.name.toLowerCase(), name)) ??
    config.nodes.find((n) => pointsAtThisMachine(n.host, machine.name)) ??
    null
  );
}

function isNumberedName(candidate: string, base: string): boolean {
  return candidate.startsWith(`${base}-`) && /^\d+$/.test(candidate.slice(base.length + 1));
}

/** `name`, or `name-2`, `name-3`… — the first not taken. */
function uniqueName(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) {
    const candidate = `${base}-${i}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/**
 * Detected GPUs reduced to what validates: one entry per UUID (the first) and none without memory. A GPU
 * whose memory is unknown cannot be budgeted, so it is left out rather than written as 0 MB.
 */
function usableGpus(gpus: readonly GpuConfig[]): GpuConfig[] {
  const seen = new Set<string>();
  const out: GpuConfig[] = [];
  for (const gpu of gpus) {
    if (seen.has(gpu.uuid) || !(Number.isSafeInteger(gpu.vram_mb) && gpu.vram_mb >= 1)) continue;
    seen.add(gpu.uuid);
    out.push(cloneGpu(gpu));
  }
  return out;
}

function wholeOrUndefined(n: number | undefined): number | undefined {
  return n !== undefined && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/**
 * Adds this machine (its detected node) to the cluster, or refreshes the entry that already is this machine:
 * GPUs, cpu_cores and ram_mb come from detection, while the name, host, transport, user and max_adapters the
 * person chose are kept. A different machine with the same name makes the new node `name-2` (then `-3`…).
 * Given a valid cluster, the result always validates.
 */
export function upsertMachineNode(
  config: ClusterConfig | null,
  detected: NodeConfig,
): { config: ClusterConfig; action: 'added' | 'updated'; nodeName: string } {
  // Normalised before matching (stand-ins for a blank name or host, only GPUs that can be kept), so that
  // adding the same machine twice finds the entry the first call wrote.
  const machine: NodeConfig = {
    ...detected,
    name: detected.name.trim() === '' ? 'this-machine' : detected.name,
    host: detected.host.trim() === '' ? 'localhost' : detected.host,
    gpus: usableGpus(detected.gpus),
  };
  const nodes = config ? config.nodes.map(cloneNode) : [];
  const existing = config ? findMachineNode(config, machine) : null;
  const cpuCores = wholeOrUndefined(machine.cpu_cores);
  const ramMb = wholeOrUndefined(machine.ram_mb);
  if (existing && config) {
    const at = config.nodes.indexOf(existing);
    const node = nodes[at]!;
    node.gpus = machine.gpus;
    if (cpuCores === undefined) delete node.cpu_cores;
    else node.cpu_cores = cpuCores;
    if (ramMb === undefined) delete node.ram_mb;
    else node.ram_mb = ramMb;
    return { config: { nodes }, action: 'updated', nodeName: node.name };
  }
  const node: NodeConfig = {
    name: uniqueName(machine.name, new Set(nodes.map((n) => n.name))),
    host: machine.host,
    // This machine is reached directly; ssh to a loopback host would also fail validation.
    transport: isLoopbackHost(machine.host) ? 'local' : machine.transport,
    gpus: machine.gpus,
    max_adapters: Number.isSafeInteger(machine.max_adapters) && machine.max_adapters >= 1 ? machine.max_adapters : 1,
  };
  if (machine.user !== undefined) node.user = machine.user;
  if (cpuCores !== undefined) node.cpu_cores = cpuCores;
  if (ramMb !== undefined) node.ram_mb = ramMb;
  nodes.push(node);
  return { config: { nodes }, action: 'added', nodeName: node.name };
}

/**
 * Where cluster.yaml's entry for this machine disagrees with what was detected: GPUs missing or extra (by
 * UUID), VRAM or memory type different. Warnings only — the file may describe the machine as intended.
 * `nodeIndex`, when given, makes the paths absolute (['nodes', i, 'gpus', j, …]) so they can be located.
 */
export function machineDrift(declared: NodeConfig, detected: NodeConfig, nodeIndex?: number): ClusterIssue[] {
  const base: (string | number)[] = nodeIndex === undefined ? [] : ['nodes', nodeIndex];
  const issues: ClusterIssue[] = [];
  const warn = (message: string, path: (string | number)[]) => issues.push({ severity: 'warning', message, path: [...base, ...path] });
  const who = `node '${declared.name}'`;
  const detectedByUuid = new Map(detected.gpus.map((g) => [g.uuid, g]));
  const declaredUuids = new Set(declared.gpus.map((g) => g.uuid));
  declared.gpus.forEach((gpu, j) => {
    const found = detectedByUuid.get(gpu.uuid);
    if (!found) {
      warn(`${who}: GPU '${gpu.uuid}' is in cluster.yaml but was not detected on this machine — check the UUID with \`nvidia-smi -L\`, or press Add this machine to refresh the entry`, ['gpus', j, 'uuid']);
      return;
    }
    if (found.vram_mb !== gpu.vram_mb) {
      warn(`${who}: GPU '${gpu.uuid}' has vram_mb ${gpu.vram_mb} in cluster.yaml but ${found.vram_mb} MB detected`, ['gpus', j, 'vram_mb']);
    }
    if (found.memory_type !== gpu.memory_type) {
      warn(`${who}: GPU '${gpu.uuid}' has memory_type ${gpu.memory_type} in cluster.yaml but ${found.memory_type} detected`, ['gpus', j, 'memory_type']);
    }
  });
  for (const gpu of detected.gpus) {
    if (!declaredUuids.has(gpu.uuid)) {
      warn(`${who}: GPU '${gpu.uuid}' (${gpu.type}, ${gpu.vram_mb} MB) was detected but is not in cluster.yaml — press Add this machine to add it`, ['gpus']);
    }
  }
  return issues;
}
