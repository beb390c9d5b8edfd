/**
 * Reads cluster.yaml into a ClusterConfig, field by field from the YAML tree (never through a generic
 * YAML→object conversion), so a key such as `__proto__` is only ever a name to warn about, each value is
 * checked with its line and column at hand, and aliases are expanded under a budget.
 */
import { isAlias, isMap, isScalar, isSeq, type Alias, type Document, type LineCounter, type Node } from 'yaml';
import { formatPath } from './format-issue';
import { MAX_LISTED_ISSUES, readYamlDocument } from './read-yaml';
import type { ClusterConfig, ClusterIssue, ClusterParseResult, GpuConfig, MemoryType, NodeConfig, Transport } from './types';
import { validateCluster } from './validate';

type Path = (string | number)[];

const TOP_KEYS = ['nodes'] as const;
const NODE_KEYS = ['name', 'host', 'transport', 'user', 'gpus', 'max_adapters', 'cpu_cores', 'ram_mb'] as const;
const GPU_KEYS = ['uuid', 'type', 'vram_mb', 'memory_type'] as const;

/** u64 fields are held as JS numbers, so the ceiling is the largest integer a double stores exactly. */
const MAX_WHOLE = Number.MAX_SAFE_INTEGER;
const MAX_U32 = 0xffff_ffff;

const MISSING_HINTS: Record<string, string> = {
  name: 'a unique name for the node, e.g. name: desktop',
  host: 'the address to reach it: localhost for this machine, or a hostname or IP for ssh',
  uuid: 'the GPU UUID that `nvidia-smi -L` prints, e.g. GPU-abcd-1234',
  type: 'a type slug such as rtx-4090 or jetson-orin',
  vram_mb: "the GPU's memory in MB, e.g. vram_mb: 24564",
};

/** Everything one parse accumulates: issues, which paths were unusable, and how aliases resolve. */
class Reader {
  readonly errors: ClusterIssue[] = [];
  readonly warnings: ClusterIssue[] = [];
  /** Paths whose value could not be read; validation issues under them are dropped as follow-on noise. */
  readonly broken: string[] = [];
  private readonly aliasTargets = new Map<Alias, Node | null>();
  unlistedWarnings = 0;
  /** Where the most recent alias was followed: the place to blame when expansion runs over budget. */
  private lastAliasOffset: number | null = null;
  private visits = 0;
  private visitBudget = Infinity;
  private root: unknown = null;

  constructor(private readonly lineCounter: LineCounter) {}

  /** Indexes the document; may report errors (duplicate keys), so it runs where errors are caught. */
  prepare(doc: Document.Parsed): void {
    this.root = doc.contents;
    const nodeCount = this.indexDocument(doc.contents);
    // Without aliases every YAML node is read at most once; aliases may repeat small blocks, not explode.
    this.visitBudget = 4 * nodeCount + 10_000;
  }

  /**
   * One pre-order pass over the whole document that (1) maps every alias to the node its anchor named most
   * recently before it and (2) finds duplicate keys in every mapping. The yaml package can do both, but
   * its Alias.resolve() rescans the document per alias and its uniqueKeys check compares each key with all
   * earlier ones: both quadratic, so a 1 MiB file of distinct keys would take minutes.
   */
  private indexDocument(root: unknown): number {
    const current = new Map<string, Node>();
    let count = 0;
    // One path array, pushed and popped; copied only when an error needs it (this pass sees every node).
    const path: Path = [];
    const visit = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      count++;
      if (isAlias(node)) {
        this.aliasTargets.set(node, current.get(node.source) ?? null);
        return;
      }
      const anchor = (node as { anchor?: string }).anchor;
      if (anchor) current.set(anchor, node as Node);
      if (isMap(node)) {
        const seen = new Set<string>();
        for (const pair of node.items) {
          const key: unknown = isScalar(pair.key) ? pair.key.value : undefined;
          const text = key === undefined || key === null ? null : String(key);
          if (text !== null) {
            const identity = `${typeof key}:${text}`;
            if (seen.has(identity)) {
              this.error(`the key '${truncate(text)}' appears twice in the same mapping; keep only one`, [...path, text], this.offsetOf(pair.key, 0));
            }
            seen.add(identity);
          }
          visit(pair.key);
          if (text !== null) path.push(text);
          visit(pair.value);
          if (text !== null) path.pop();
        }
      } else if (isSeq(node)) {
        for (let i = 0; i < node.items.length; i++) {
          path.push(i);
          visit(node.items[i]);
          path.pop();
        }
      }
    };
    visit(root);
    return count;
  }

  /**
   * Source offset of the value at `path`, or of the deepest mapping or list on the way that exists (a
   * missing field is placed at the mapping that lacks it). Looked up only for issues, so reading stays lean.
   */
  offsetAtPath(path: Path): number | undefined {
    let node: unknown = this.root;
    let offset = this.offsetOf(node, -1);
    for (const part of path) {
      if (isAlias(node)) node = this.aliasTargets.get(node) ?? null;
      let next: unknown;
      if (typeof part === 'number' && isSeq(node)) next = node.items[part];
      else if (typeof part === 'string' && isMap(node)) {
        next = node.items.find((pair) => {
          const key = isAlias(pair.key) ? this.aliasTargets.get(pair.key) : pair.key;
          return isScalar(key) && scalarText(key) === part;
        })?.value;
      }
      if (next === undefined || next === null) break;
      node = next;
      offset = this.offsetOf(node, offset);
    }
    return offset === -1 ? undefined : offset;
  }

  pos(offset: number): { line: number; col: number } {
    return this.lineCounter.linePos(offset);
  }

  offsetOf(node: unknown, fallback: number): number {
    const range = (node as { range?: [number, number, number] | null } | null)?.range;
    return range ? range[0] : fallback;
  }

  error(message: string, path: Path, offset: number): void {
    this.errors.push({ severity: 'error', message, path, ...this.pos(offset) });
    this.broken.push(formatPath(path));
    // Past the listing cap nothing more would be shown, so reading further only burns time on junk input.
    if (this.errors.length > MAX_LISTED_ISSUES) throw new TooManyErrors();
  }

  warning(message: string, path: Path, offset: number): void {
    if (this.warnings.length >= MAX_LISTED_ISSUES) {
      this.unlistedWarnings++;
      return;
    }
    this.warnings.push({ severity: 'warning', message, path, ...this.pos(offset) });
  }

  /** Follows an alias to its anchored node, counting every read against the expansion budget. */
  deref(node: unknown, path: Path, fallbackOffset: number): Node | null | 'failed' {
    if (++this.visits > this.visitBudget) {
      throw new AliasBudgetExceeded(path, this.lastAliasOffset ?? this.offsetOf(node, fallbackOffset));
    }
    if (node === null || node === undefined) return null;
    if (isAlias(node)) {
      this.lastAliasOffset = this.offsetOf(node, fallbackOffset);
      const target = this.aliasTargets.get(node);
      if (!target) {
        this.error(`alias *${node.source} refers to no anchor &${node.source} defined before it`, path, this.offsetOf(node, fallbackOffset));
        return 'failed';
      }
      return target;
    }
    return node as Node;
  }

  /**
   * Reads a mapping's keys, warning about unknown ones (entrenar ignores them too) and about keys that are
   * not plain names. Returns the known keys' values with the offset of each key.
   */
  entries(map: Node, path: Path, known: readonly string[]): Map<string, { value: unknown; keyOffset: number }> {
    const out = new Map<string, { value: unknown; keyOffset: number }>();
    if (!isMap(map)) return out;
    const mapOffset = this.offsetOf(map, 0);
    for (const pair of map.items) {
      const keyNode = this.deref(pair.key, path, mapOffset);
      const keyOffset = this.offsetOf(pair.key, mapOffset);
      if (keyNode === 'failed') continue;
      const key = keyNode !== null && isScalar(keyNode) ? scalarText(keyNode) : null;
      if (key === null) {
        const where = path.length === 0 ? 'the top level' : formatPath(path);
        this.warning(`${where} has a key that is not a plain name (${describe(keyNode)}); it is ignored`, path, keyOffset);
        continue;
      }
      if (key === '<<') {
        this.warning(
          `${path.length === 0 ? 'the top level' : formatPath(path)} uses a merge key (<<), which YAML 1.2 and entrenar do not apply; it is ignored — write the fields out`,
          [...path, key],
          keyOffset,
        );
        continue;
      }
      if (!known.includes(key)) {
        const guess = closest(key, known);
        const what = path.length === 0 ? `'${truncate(key)}' at the top level` : formatPath([...path, truncate(key)]);
        this.warning(
          `${what} is not a cluster.yaml key${guess ? ` (did you mean ${guess}?)` : ''}; it is ignored — known keys here: ${known.join(', ')}`,
          [...path, key],
          keyOffset,
        );
        continue;
      }
      out.set(key, { value: pair.value, keyOffset });
    }
    return out;
  }
}

class TooManyErrors extends Error {}

class AliasBudgetExceeded extends Error {
  constructor(
    readonly path: Path,
    readonly offset: number,
  ) {
    super('alias expansion budget exceeded');
  }
}

/** Text of a scalar as serde_yaml reads it into a String field: strings as they are, other scalars as written. */
function scalarText(node: Node): string | null {
  if (!isScalar(node)) return null;
  const v = node.value;
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return null;
  return node.source ?? String(v);
}

function truncate(s: string, max = 40): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** What a value is, for "got …" in messages: `"lots"`, `1.5`, `true`, `nothing`, `a list`, `a mapping`. */
function describe(node: Node | null | undefined): string {
  if (node === null || node === undefined) return 'nothing';
  if (isMap(node)) return 'a mapping';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) {
    const v = node.value;
    if (v === null || v === undefined) return 'nothing';
    if (typeof v === 'string') return JSON.stringify(truncate(v));
    return truncate(node.source ?? String(v));
  }
  return 'something else';
}

/** The known key within edit distance 2 of a misspelt one, for "did you mean". */
function closest(key: string, known: readonly string[]): string | null {
  if (key.length > 40) return null;
  let best: string | null = null;
  let bestDistance = 3;
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}

type Field = { value: unknown; keyOffset: number } | undefined;

/** An absent or null field: undefined when it is optional, else null after reporting it missing at offset. */
function absent(r: Reader, path: Path, required: boolean, offset: number): undefined | null {
  if (!required) return undefined;
  const name = String(path[path.length - 1]);
  r.error(`${formatPath(path)} is missing (${MISSING_HINTS[name] ?? 'required'})`, path, offset);
  return null;
}

interface TextOptions {
  required: boolean;
  mapOffset: number;
}

/** A string field. Returns undefined when absent (optional) and null after reporting an error. */
function readText(r: Reader, field: Field, path: Path, opts: TextOptions): string | undefined | null {
  if (!field) return absent(r, path, opts.required, opts.mapOffset);
  const node = r.deref(field.value, path, field.keyOffset);
  if (node === 'failed') return null;
  const offset = r.offsetOf(node, field.keyOffset);
  const text = node === null ? null : scalarText(node);
  if (text === null) {
    if (node !== null && !isScalar(node)) {
      r.error(`${formatPath(path)} must be text, got ${describe(node)}`, path, offset);
      return null;
    }
    return absent(r, path, opts.required, offset);
  }
  if (opts.required && text.trim() === '') {
    r.error(`${formatPath(path)} must not be empty`, path, offset);
    return null;
  }
  return text;
}

interface NumberOptions {
  required: boolean;
  unit: string;
  max: number;
  mapOffset: number;
}

/** A whole-number field (entrenar's u64/u32/usize). Returns undefined when absent and null after an error. */
function readWhole(r: Reader, field: Field, path: Path, opts: NumberOptions): number | undefined | null {
  if (!field) return absent(r, path, opts.required, opts.mapOffset);
  const node = r.deref(field.value, path, field.keyOffset);
  if (node === 'failed') return null;
  const offset = r.offsetOf(node, field.keyOffset);
  const value = node !== null && isScalar(node) ? node.value : undefined;
  if ((node === null || value === null) && !opts.required) return undefined;
  const what = `a whole number${opts.unit ? ` of ${opts.unit}` : ''}`;
  if (typeof value !== 'bigint' || value < 0n) {
    r.error(`${formatPath(path)} must be ${what}, got ${describe(node)}`, path, offset);
    return null;
  }
  if (value > BigInt(opts.max)) {
    r.error(`${formatPath(path)} must be ${what} no larger than ${opts.max}, got ${describe(node)}`, path, offset);
    return null;
  }
  return Number(value);
}

/** A lower-case enum field with a default. Returns null after an error. */
function readChoice<T extends string>(r: Reader, field: Field, path: Path, choices: readonly T[], fallback: T): T | null {
  if (!field) return fallback;
  const node = r.deref(field.value, path, field.keyOffset);
  if (node === 'failed') return null;
  const offset = r.offsetOf(node, field.keyOffset);
  const text = node !== null && isScalar(node) ? scalarText(node) : null;
  const found = choices.find((c) => c === text);
  if (found) return found;
  const caseHint = text !== null && choices.some((c) => c === text.toLowerCase()) ? ' (write it in lower case)' : '';
  r.error(`${formatPath(path)} must be ${choices.join(' or ')}, got ${describe(node)}${caseHint}`, path, offset);
  return null;
}

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
function readCluster(r: Reader, root: unknown): ClusterConfig | null {
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

/** Keeps the first MAX_LISTED_ISSUES issues and says how many more there were (`alsoUnlisted` were never kept). */
function capIssues(issues: ClusterIssue[], severity: 'error' | 'warning', alsoUnlisted = 0): ClusterIssue[] {
  const more = Math.max(0, issues.length - MAX_LISTED_ISSUES) + alsoUnlisted;
  if (more === 0) return issues;
  const kept = issues.slice(0, MAX_LISTED_ISSUES);
  kept.push({ severity, message: `… and ${more} more ${severity}s not listed`, path: [] });
  return kept;
}

/**
 * Errors sorted by where they are in the file, as a compiler lists them; those without a place keep their
 * order at the end. (validateCluster alone keeps entrenar's rule order.)
 */
function inFileOrder(issues: ClusterIssue[]): ClusterIssue[] {
  const placed = issues.filter((i) => i.line !== undefined);
  const unplaced = issues.filter((i) => i.line === undefined);
  placed.sort((a, b) => a.line! - b.line! || (a.col ?? 0) - (b.col ?? 0));
  return [...placed, ...unplaced];
}

/** Attaches line:col to a validation issue from the path it names, or from its nearest located ancestor. */
function locate(r: Reader, issue: ClusterIssue): ClusterIssue {
  const offset = r.offsetAtPath(issue.path);
  return offset === undefined ? issue : { ...issue, ...r.pos(offset) };
}

function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);
}

/**
 * Parses and validates cluster.yaml text. Never throws. Errors and warnings carry 1-based line:col where
 * the place is known; unknown keys are warnings. `ok` is true only when there are no errors at all.
 */
export function parseClusterYaml(text: string): ClusterParseResult {
  const read = readYamlDocument(text);
  if (!read.ok) return { ok: false, errors: capIssues(read.errors, 'error'), warnings: capIssues(read.warnings, 'warning') };
  const r = new Reader(read.lineCounter);
  let config: ClusterConfig | null;
  try {
    r.prepare(read.doc);
    config = r.errors.length > 0 ? null : readCluster(r, read.doc.contents);
  } catch (caught) {
    config = null;
    if (caught instanceof AliasBudgetExceeded) {
      // This is the cause; anything found while expanding is noise, so it replaces them.
      r.errors.length = 0;
      r.errors.push({
        severity: 'error',
        message:
          'aliases (*name) here expand into far more data than the file holds; a cluster.yaml may reuse small blocks, not multiply them — write the entries out',
        path: caught.path,
        ...r.pos(caught.offset),
      });
    } else if (caught instanceof TooManyErrors) {
      const listed = inFileOrder(r.errors).slice(0, MAX_LISTED_ISSUES);
      listed.push({ severity: 'error', message: `… reading stopped after ${MAX_LISTED_ISSUES} errors; fix these first`, path: [] });
      return { ok: false, errors: listed, warnings: capIssues([...read.warnings, ...r.warnings], 'warning', r.unlistedWarnings) };
    } else {
      // Not expected; reported rather than thrown because a dropped file must never take the app down.
      const why = caught instanceof Error ? caught.message : String(caught);
      r.errors.push({ severity: 'error', message: `cluster.yaml could not be read: ${why}`, path: [] });
    }
  }
  const warnings = capIssues([...read.warnings, ...r.warnings], 'warning', r.unlistedWarnings);
  if (config) {
    for (const problem of validateCluster(config)) {
      const p = formatPath(problem.path);
      if (r.broken.some((b) => isUnder(p, b))) continue;
      r.errors.push(locate(r, problem));
    }
  }
  if (r.errors.length > 0 || !config) return { ok: false, errors: capIssues(inFileOrder(r.errors), 'error'), warnings };
  return { ok: true, config, warnings };
}
