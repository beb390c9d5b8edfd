/**
 * The state of one cluster.yaml read: issues with their line and column, which paths were unusable, and how
 * aliases resolve (expanded under a budget, so an alias bomb stops instead of exhausting memory).
 */
import { isAlias, isMap, isScalar, isSeq, type Alias, type Document, type LineCounter, type Node } from 'yaml';
import { formatPath } from './format-issue';
import { MAX_LISTED_ISSUES } from './read-yaml';
import type { ClusterIssue } from './types';
import { closest, describe, scalarText, truncate } from './yaml-scalars';

export type Path = (string | number)[];

/** Everything one parse accumulates: issues, which paths were unusable, and how aliases resolve. */
export class Reader {
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

export class TooManyErrors extends Error {}

export class AliasBudgetExceeded extends Error {
  constructor(
    readonly path: Path,
    readonly offset: number,
  ) {
    super('alias expansion budget exceeded');
  }
}
