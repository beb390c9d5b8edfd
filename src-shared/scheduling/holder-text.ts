/**
 * What holds a node, in the words a waiting job or run quotes: "job r16-lr3e-3 (step 30 of 60)", "run r1",
 * "all 2 GPUs held by run r1". One place, so the Jobs view, the Runs view and the node cards say it alike.
 */
import type { NodeCapacity } from './capacity';
import type { Holding, NodeUsage } from './holdings';

/** At most this many holders are named; the rest are counted ("and 2 more"). */
const NAMED = 3;

/** "job a (step 3 of 6)" or "run r1 (reserved)". */
export function holderText(h: Holding): string {
  return `${h.kind} ${h.name}${h.detail ? ` (${h.detail})` : ''}`;
}

/** "job a (step 3 of 6), run r1 and 2 more": each holder once (a run member holding two GPUs is one holder). */
export function describeHolders(holders: readonly Holding[]): string {
  const seen = new Set<string>();
  const texts: string[] = [];
  for (const h of holders) {
    const key = `${h.kind}\u0000${h.id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    texts.push(holderText(h));
  }
  if (texts.length === 0) return 'nothing';
  const named = texts.slice(0, NAMED);
  const more = texts.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more` : listText(named);
}

/** "a", "a and b", "a, b and c". */
export function listText(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]!}`;
}

/** Every GPU of the node is held by run members: "all 2 GPUs held by run r1", "GPU 0 held by run r1". */
export function gpusHeldByRuns(node: NodeCapacity, usage: NodeUsage): string {
  const names: string[] = [];
  for (const gpu of usage.gpus) {
    for (const h of gpu.holders) if (h.kind === 'run' && !names.includes(h.name)) names.push(h.name);
  }
  const by = `${names.length > 1 ? 'runs' : 'run'} ${listText(names)}`;
  if (node.gpus.length === 1) return `GPU ${node.gpus[0]!.index} held by ${by}`;
  return `all ${node.gpus.length} GPUs held by ${by}`;
}
