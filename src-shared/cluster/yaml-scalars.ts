/**
 * Small readers of YAML scalars for messages: a scalar's text as entrenar (serde_yaml) sees it, what a value
 * is ("got …"), and the known key a misspelt one was probably meant to be.
 */
import { isMap, isScalar, isSeq, type Node } from 'yaml';

/** Text of a scalar as serde_yaml reads it into a String field: strings as they are, other scalars as written. */
export function scalarText(node: Node): string | null {
  if (!isScalar(node)) return null;
  const v = node.value;
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return null;
  return node.source ?? String(v);
}

export function truncate(s: string, max = 40): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** What a value is, for "got …" in messages: `"lots"`, `1.5`, `true`, `nothing`, `a list`, `a mapping`. */
export function describe(node: Node | null | undefined): string {
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
export function closest(key: string, known: readonly string[]): string | null {
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
