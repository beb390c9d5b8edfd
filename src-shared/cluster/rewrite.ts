/**
 * Writes a new cluster into the text of the current cluster.yaml instead of over it: every byte outside the
 * nodes that change stays as the person wrote it (comments, blank lines, spacing, unknown keys at any level),
 * changed nodes are edited field by field in their YAML tree (keeping their own comments and unknown keys),
 * removed nodes are cut out with the comment lines right above them, and new nodes are appended in the
 * file's own indentation. Whatever path is taken, the result is parsed back and must read as exactly the new
 * cluster; if a file is laid out in a way the splice cannot handle, the yaml package's Document API rewrites
 * it (comments and unknown keys still kept), and only a file that does not parse at all is written afresh.
 */
import { Document, isMap, isSeq, parseDocument, type YAMLMap, type YAMLSeq } from 'yaml';
import { editNodeMap, newNodeMap } from './edit-node';
import { sameCluster, sameNode } from './merge';
import { parseClusterYaml } from './parse';
import { serializeClusterYaml } from './serialize';
import type { ClusterConfig } from './types';

/** How the text was produced: kept byte for byte outside edited nodes, re-rendered by the Document API, or new. */
export type RewriteMethod = 'splice' | 'document' | 'fresh';

interface Plan {
  /** For each new node, the index of the current node it replaces (same name), or -1 when it is added. */
  sources: number[];
  /** Current node indexes that disappear. */
  removed: number[];
}

/** Pairs new nodes with current ones by name (first unused match), in order. */
function plan(current: ClusterConfig, next: ClusterConfig): Plan {
  const used = new Set<number>();
  const sources = next.nodes.map((node) => {
    const at = current.nodes.findIndex((n, i) => !used.has(i) && n.name === node.name);
    if (at !== -1) used.add(at);
    return at;
  });
  const removed = current.nodes.map((_, i) => i).filter((i) => !used.has(i));
  return { sources, removed };
}

/** The splice keeps order: kept nodes in their old order, new ones only after the last kept one. */
function spliceable(p: Plan): boolean {
  let last = -1;
  let addedSeen = false;
  for (const source of p.sources) {
    if (source === -1) addedSeen = true;
    else {
      if (addedSeen || source < last) return false;
      last = source;
    }
  }
  return true;
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** Where a node's own text ends: its range without the blank lines the parser counts in. */
function contentEnd(text: string, end: number): number {
  while (end > 0 && /\s/.test(text[end - 1]!)) end--;
  return end;
}

/** A map's YAML text at column 0, without the comments around it (those stay where they are in the file). */
function mapText(map: YAMLMap, indentSeq: boolean): string {
  map.commentBefore = undefined;
  map.comment = undefined;
  map.spaceBefore = false;
  const doc = new Document();
  doc.contents = map;
  return doc.toString({ indentSeq, lineWidth: 0 });
}

function indentLines(text: string, column: number): string {
  const pad = ' '.repeat(column);
  return text
    .split('\n')
    .map((line, i) => (i === 0 || line === '' ? line : pad + line))
    .join('\n');
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

function spliceText(text: string, seq: YAMLSeq, current: ClusterConfig, next: ClusterConfig, p: Plan, indentSeq: boolean): string | null {
  const maps = seq.items;
  if (seq.flow || maps.length === 0 || !maps.every((m) => isMap(m) && m.range)) return null;
  const edits: Edit[] = [];
  const itemStart = (map: YAMLMap): number | null => {
    const start = lineStart(text, map.range![0]);
    return /^ *- +$/.test(text.slice(start, map.range![0])) ? start : null;
  };
  for (const i of p.removed) {
    const map = maps[i] as YAMLMap;
    let start = itemStart(map);
    if (start === null) return null;
    // Comment lines right above the item describe it; they go with it.
    const dashColumn = text.slice(start).search(/-/);
    for (let prev = lineStart(text, start - 1); start > 0 && prev < start; prev = lineStart(text, start - 1)) {
      const line = text.slice(prev, start);
      const column = line.search(/\S/);
      if (!/^\s*#/.test(line) || column < dashColumn) break;
      start = prev;
    }
    // One blank line between the neighbours is enough: the removed node's own is dropped.
    let end = map.range![1];
    if (/(^|\n)[ \t]*\n$/.test(text.slice(0, start))) {
      for (let m = /^[ \t]*\n/.exec(text.slice(end)); m; m = /^[ \t]*\n/.exec(text.slice(end))) end += m[0].length;
    }
    edits.push({ start, end, text: '' });
  }
  next.nodes.forEach((node, k) => {
    const source = p.sources[k]!;
    if (source === -1 || sameNode(current.nodes[source]!, node)) return;
    const map = maps[source] as YAMLMap;
    const column = map.range![0] - lineStart(text, map.range![0]);
    const copy = map.clone() as YAMLMap;
    editNodeMap(copy, current.nodes[source]!, node);
    const replacement = indentLines(mapText(copy, indentSeq), column).replace(/\n+$/, '');
    edits.push({ start: map.range![0], end: contentEnd(text, map.range![1]), text: replacement });
  });
  const added = next.nodes.filter((_, k) => p.sources[k] === -1);
  if (added.length > 0) {
    const last = maps[maps.length - 1] as YAMLMap;
    const start = itemStart(last);
    if (start === null) return null;
    const dashColumn = text.slice(start).search(/-/);
    const keyColumn = last.range![0] - start;
    // A blank line between nodes when the file has one between its first two; otherwise none.
    const second = maps[1] as YAMLMap | undefined;
    const first = maps[0] as YAMLMap;
    const blank = second && /\n[ \t]*\n/.test(text.slice(contentEnd(text, first.range![1]), second.range![0])) ? '\n' : '';
    const at = contentEnd(text, last.range![1]);
    let insert = '';
    for (const node of added) {
      const body = indentLines(mapText(newNodeMap(node), indentSeq), keyColumn).replace(/\n+$/, '');
      insert += `\n${blank}${' '.repeat(dashColumn)}-${' '.repeat(keyColumn - dashColumn - 1)}${body}`;
    }
    edits.push({ start: at, end: at, text: insert });
  }
  edits.sort((a, b) => b.start - a.start);
  let out = text;
  for (const e of edits) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

/** The same edit through the Document API: comments and unknown keys kept, layout normalised by the yaml package. */
function documentText(doc: Document.Parsed, seq: YAMLSeq, current: ClusterConfig, next: ClusterConfig, p: Plan, indentSeq: boolean): string {
  const items = next.nodes.map((node, k) => {
    const source = p.sources[k]!;
    const original = source === -1 ? undefined : seq.items[source];
    if (source === -1 || !isMap(original)) return newNodeMap(node);
    editNodeMap(original, current.nodes[source]!, node);
    return original;
  });
  seq.items = items;
  seq.flow = false;
  return doc.toString({ indentSeq, lineWidth: 0 });
}

/**
 * The text to store for `next`, given the file's current text (null when there is none). Returns the text
 * and how it was made; the text always parses back to exactly `next`.
 */
export function rewriteClusterText(currentText: string | null, next: ClusterConfig): { text: string; method: RewriteMethod } {
  const fresh = { text: serializeClusterYaml(next), method: 'fresh' as const };
  if (currentText === null || currentText.trim() === '') return fresh;
  const parsed = parseClusterYaml(currentText);
  if (!parsed.ok) return fresh;
  const current = parsed.config;
  const reads = (text: string) => {
    const back = parseClusterYaml(text);
    return back.ok && sameCluster(back.config, next);
  };
  if (sameCluster(current, next)) return { text: currentText, method: 'splice' };
  const p = plan(current, next);
  const doc = parseDocument(currentText, { intAsBigInt: true, uniqueKeys: false, keepSourceTokens: false });
  const seq = doc.get('nodes', true);
  if (!isSeq(seq) || doc.errors.length > 0) return fresh;
  const indentSeq = detectIndentSeq(currentText, seq);
  if (spliceable(p)) {
    const spliced = spliceText(currentText, seq, current, next, p, indentSeq);
    if (spliced !== null && reads(spliced)) return { text: spliced, method: 'splice' };
  }
  const viaDocument = documentText(doc, seq, current, next, p, indentSeq);
  return reads(viaDocument) ? { text: viaDocument, method: 'document' } : fresh;
}

/** Whether the file indents list items under their key (`nodes:\n  - name`) or not (`nodes:\n- name`). */
function detectIndentSeq(text: string, seq: YAMLSeq): boolean {
  const first = seq.items[0];
  if (!isMap(first) || !first.range) return true;
  const start = lineStart(text, first.range[0]);
  return text.slice(start).search(/-/) > 0;
}
