/**
 * Reads cluster.yaml's tree into a ClusterConfig node by node and GPU by GPU. A part that cannot be read
 * becomes a placeholder that keeps later indices aligned and triggers no validation rule, so every problem
 * in the file is still reported in one pass.
 */
import { isMap, isScalar, isSeq } from 'yaml';
import { formatPath } from './format-issue';
import { MAX_U32, MAX_WHOLE, readChoice, readText, readWhole, type Field } from './read-fields';
import type { ClusterConfig, GpuConfig, MemoryType, NodeConfig, Transport } from './types';
import type { Path, Reader } from './yaml-reader';
import { describe } from './yaml-scalars';

export const TOP_KEYS = ['nodes'] as const;
export const NODE_KEYS = ['name', 'host', 'transport', 'user', 'gpus', 'max_adapters', 'cpu_cores', 'ram_mb'] as const;
export const GPU_KEYS = ['uuid', 'type', 'vram_mb', 'memory_type'] as const;

/** A stand-in for a GPU that could not be read: keeps indices aligned and triggers no validation rule. */
function gpuPlaceholder(path: Path): GpuConfig {
  return { uuid: `${formatPath(path)} (unreadable)`, type: 'unknown', vram_mb: 1, memory_type: 'discrete' };
}

function readGpu(r: Reader, item: unknown, path: Path, fallbackOffset: number): GpuConfig {
  const node = r.deref(item, path, fallbackOffset);
  if (node === 'failed') return gpuPlaceholder(path);
  const offset = r.offsetOf(node, fallbackOffset);
  if (node === null || !isMap(node)) {
    r.error(`${formatPath(path)} must be a mapping with uuid, type and vram_mb, got ${describe(node)}`, path, offset);
    return gpuPlaceholder(path);
  }
  const f = r.entries(node, path, GPU_KEYS);
  const uuid = readText(r, f.get('uuid'), [...path, 'uuid'], { required: true, mapOffset: offset });
  const type = readText(r, f.get('type'), [...path, 'type'], { required: true, mapOffset: offset });
  const vram = readWhole(r, f.get('vram_mb'), [...path, 'vram_mb'], { required: true, unit: 'MB', max: MAX_WHOLE, mapOffset: offset });
  const memoryType = readChoice<MemoryType>(r, f.get('memory_type'), [...path, 'memory_type'], ['discrete', 'unified'], 'discrete');
  if (uuid == null || type == null || vram == null || memoryType == null) {
    const stand = gpuPlaceholder(path);
    return { uuid: uuid ?? stand.uuid, type: type ?? stand.type, vram_mb: vram ?? stand.vram_mb, memory_type: memoryType ?? stand.memory_type };
  }
  return { uuid, type, vram_mb: vram, memory_type: memoryType };
}

/** A readable stand-in for a node that could not be read: keeps later indices aligned, triggers no rule. */
function nodePlaceholder(path: Path): NodeConfig {
  return { name: formatPath(path), host: 'unreadable', transport: 'local', gpus: [], max_adapters: 1 };
}

function readNode(r: Reader, item: unknown, path: Path, fallbackOffset: number): NodeConfig {
  const node = r.deref(item, path, fallbackOffset);
  if (node === 'failed') return nodePlaceholder(path);
  const offset = r.offsetOf(node, fallbackOffset);
  if (node === null || !isMap(node)) {
    r.error(`${formatPath(path)} must be a mapping with at least name and host, got ${describe(node)}`, path, offset);
    return nodePlaceholder(path);
  }
  const f = r.entries(node, path, NODE_KEYS);
  const name = readText(r, f.get('name'), [...path, 'name'], { required: true, mapOffset: offset });
  const host = readText(r, f.get('host'), [...path, 'host'], { required: true, mapOffset: offset });
  const transport = readChoice<Transport>(r, f.get('transport'), [...path, 'transport'], ['local', 'ssh'], 'local');
  const user = readText(r, f.get('user'), [...path, 'user'], { required: false, mapOffset: offset });
  const gpus = readGpus(r, f.get('gpus'), [...path, 'gpus']);
  const maxAdapters = readWhole(r, f.get('max_adapters'), [...path, 'max_adapters'], {
    required: false,
    unit: '',
    max: MAX_WHOLE,
    mapOffset: offset,
  });
  const cpuCores = readWhole(r, f.get('cpu_cores'), [...path, 'cpu_cores'], { required: false, unit: 'cores', max: MAX_U32, mapOffset: offset });
  const ramMb = readWhole(r, f.get('ram_mb'), [...path, 'ram_mb'], { required: false, unit: 'MB', max: MAX_WHOLE, mapOffset: offset });

  const result: NodeConfig = {
    name: name ?? formatPath(path),
    host: host ?? 'unreadable',
    transport: transport ?? 'local',
    gpus,
    // Absent means entrenar's default of 1; unreadable also becomes 1 so ">= 1" does not fire on top of the type error.
    max_adapters: maxAdapters ?? 1,
  };
  if (typeof user === 'string') result.user = user;
  if (typeof cpuCores === 'number') result.cpu_cores = cpuCores;
  if (typeof ramMb === 'number') result.ram_mb = ramMb;
  return result;
}

function readGpus(r: Reader, field: Field, path: Path): GpuConfig[] {
  if (!field) return [];
  const node = r.deref(field.value, path, field.keyOffset);
  if (node === 'failed') return [];
  const offset = r.offsetOf(node, field.keyOffset);
  if (node === null || !isSeq(node)) {
    const empty = node === null || (isScalar(node) && node.value === null);
    r.error(`${formatPath(path)} must be a list of GPUs${empty ? ' (write gpus: [] for a CPU-only node)' : ''}, got ${describe(node)}`, path, offset);
    return [];
  }
  return node.items.map((item, j) => readGpu(r, item, [...path, j], offset));
}

/** Reads the whole tree; null when there is no usable `nodes:` list at all (nothing left to validate). */
export function readCluster(r: Reader, root: unknown): ClusterConfig | null {
  const top = r.deref(root, [], 0);
  if (top === 'failed') return null;
  if (top === null || (isScalar(top) && top.value === null)) {
    r.error('cluster.yaml is empty; it needs a `nodes:` list with at least one node (see assets/examples/cluster.yaml)', [], r.offsetOf(top, 0));
    return null;
  }
  const topOffset = r.offsetOf(top, 0);
  if (!isMap(top)) {
    r.error(`cluster.yaml must be a mapping with a \`nodes:\` list at the top, got ${describe(top)}`, [], topOffset);
    return null;
  }
  const f = r.entries(top, [], TOP_KEYS);
  const field = f.get('nodes');
  if (!field) {
    r.error('cluster.yaml has no `nodes:` list; add one with at least one node (see assets/examples/cluster.yaml)', ['nodes'], topOffset);
    return null;
  }
  const nodes = r.deref(field.value, ['nodes'], field.keyOffset);
  if (nodes === 'failed') return null;
  const offset = r.offsetOf(nodes, field.keyOffset);
  if (nodes === null || !isSeq(nodes)) {
    r.error(`nodes must be a list of nodes (each item starting with "- name: …"), got ${describe(nodes)}`, ['nodes'], offset);
    return null;
  }
  return { nodes: nodes.items.map((item, i) => readNode(r, item, ['nodes', i], offset)) };
}
