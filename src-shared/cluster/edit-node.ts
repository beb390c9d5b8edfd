/**
 * Edits one node of a cluster.yaml in its YAML tree, field by field: only the fields whose value changes are
 * touched, so the node keeps its comments, its unknown (say, entrenar-only) keys and its key order; a field
 * that appears is placed where entrenar's order puts it. Scalars are edited in place, keeping their comments.
 */
import { isMap, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq, type Node } from 'yaml';
import { NODE_KEYS } from './read-nodes';
import { yamlString } from './serialize';
import type { GpuConfig, NodeConfig } from './types';

const GPU_FIELDS = ['uuid', 'type', 'vram_mb', 'memory_type'] as const;
type Scalarish = string | number;

function keyText(pair: Pair): string | null {
  return isScalar(pair.key) && pair.key.value !== null && pair.key.value !== undefined ? String(pair.key.value) : null;
}

function findPair(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((pair) => keyText(pair) === key);
}

/** A scalar written as serialize would write it: plain where unambiguous in every YAML version, else quoted. */
function scalarFor(value: Scalarish): Scalar {
  const scalar = new Scalar(value);
  if (typeof value === 'string' && yamlString(value) !== value) scalar.type = Scalar.QUOTE_DOUBLE;
  return scalar;
}

/** Sets `key` to a scalar: in place when it is one already (its comment stays), else as a new pair in `order`. */
function setScalar(map: YAMLMap, key: string, value: Scalarish, order: readonly string[]): void {
  const pair = findPair(map, key);
  if (pair && isScalar(pair.value)) {
    pair.value.value = value;
    const needsQuotes = typeof value === 'string' && yamlString(value) !== value;
    if (needsQuotes && pair.value.type !== Scalar.QUOTE_SINGLE) pair.value.type = Scalar.QUOTE_DOUBLE;
    if (!needsQuotes && typeof value !== 'string') pair.value.type = Scalar.PLAIN;
    return;
  }
  setNode(map, key, scalarFor(value), order);
}

/** Sets `key` to `node`, replacing an existing value or inserting before the first key that follows it in `order`. */
function setNode(map: YAMLMap, key: string, node: Node, order: readonly string[]): void {
  const pair = findPair(map, key);
  if (pair) {
    pair.value = node;
    return;
  }
  const later = new Set(order.slice(order.indexOf(key) + 1));
  const at = map.items.findIndex((p) => later.has(keyText(p) ?? ''));
  const fresh = new Pair(new Scalar(key), node);
  if (at === -1) map.items.push(fresh);
  else map.items.splice(at, 0, fresh);
}

function deleteKey(map: YAMLMap, key: string): void {
  map.items = map.items.filter((pair) => keyText(pair) !== key);
}

function setOptional(map: YAMLMap, key: string, before: Scalarish | undefined, after: Scalarish | undefined, order: readonly string[]): void {
  if (before === after && (after === undefined || findPair(map, key))) return;
  if (after === undefined) deleteKey(map, key);
  else setScalar(map, key, after, order);
}

export function newGpuMap(gpu: GpuConfig): YAMLMap {
  const map = new YAMLMap();
  for (const field of GPU_FIELDS) map.items.push(new Pair(new Scalar(field), scalarFor(gpu[field])));
  return map;
}

function editGpuMap(map: YAMLMap, before: GpuConfig, after: GpuConfig): void {
  for (const field of GPU_FIELDS) {
    if (before[field] !== after[field]) setScalar(map, field, after[field], GPU_FIELDS);
  }
}

function sameGpus(a: readonly GpuConfig[], b: readonly GpuConfig[]): boolean {
  return a.length === b.length && a.every((g, i) => GPU_FIELDS.every((f) => g[f] === b[i]![f]));
}

/** The GPU list: kept GPUs (same UUID) keep their YAML node and comments, others are new; `[]` when empty. */
function editGpus(map: YAMLMap, before: readonly GpuConfig[], after: readonly GpuConfig[]): void {
  if (sameGpus(before, after)) return;
  const current = findPair(map, 'gpus')?.value;
  const seq = isSeq(current) ? current : new YAMLSeq();
  const oldItems = seq.items;
  seq.items = after.map((gpu) => {
    const at = before.findIndex((g) => g.uuid === gpu.uuid);
    const node = at === -1 ? undefined : oldItems[at];
    if (at !== -1 && isMap(node)) {
      editGpuMap(node, before[at]!, gpu);
      return node;
    }
    return newGpuMap(gpu);
  });
  seq.flow = after.length === 0;
  if (seq !== current) setNode(map, 'gpus', seq, NODE_KEYS);
}

/**
 * Turns `map` (the YAML of a node that reads as `before`) into one that reads as `after`, changing only what
 * differs. Call it on a clone when the original tree must stay as it was.
 */
export function editNodeMap(map: YAMLMap, before: NodeConfig, after: NodeConfig): void {
  if (before.name !== after.name) setScalar(map, 'name', after.name, NODE_KEYS);
  if (before.host !== after.host) setScalar(map, 'host', after.host, NODE_KEYS);
  if (before.transport !== after.transport) setScalar(map, 'transport', after.transport, NODE_KEYS);
  setOptional(map, 'user', before.user, after.user, NODE_KEYS);
  editGpus(map, before.gpus, after.gpus);
  if (before.max_adapters !== after.max_adapters) setScalar(map, 'max_adapters', after.max_adapters, NODE_KEYS);
  setOptional(map, 'cpu_cores', before.cpu_cores, after.cpu_cores, NODE_KEYS);
  setOptional(map, 'ram_mb', before.ram_mb, after.ram_mb, NODE_KEYS);
}

/** A new node's YAML tree in entrenar's key order, with the defaults written out as serialize writes them. */
export function newNodeMap(node: NodeConfig): YAMLMap {
  const map = new YAMLMap();
  const add = (key: string, value: Node) => map.items.push(new Pair(new Scalar(key), value));
  add('name', scalarFor(node.name));
  add('host', scalarFor(node.host));
  add('transport', scalarFor(node.transport));
  if (node.user !== undefined) add('user', scalarFor(node.user));
  const gpus = new YAMLSeq();
  gpus.items = node.gpus.map(newGpuMap);
  gpus.flow = node.gpus.length === 0;
  add('gpus', gpus);
  add('max_adapters', scalarFor(node.max_adapters));
  if (node.cpu_cores !== undefined) add('cpu_cores', scalarFor(node.cpu_cores));
  if (node.ram_mb !== undefined) add('ram_mb', scalarFor(node.ram_mb));
  return map;
}
