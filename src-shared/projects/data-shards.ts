/**
 * How a shard-mode run's data files are split over its members: each file whole, on exactly one member, sizes
 * balanced. A re-split after the members change (one lost, one joined) keeps every file it can where it was, so a
 * member fetches only what it newly holds. Pure, so the plan step computes it and the tests can check the rules.
 *
 * Balance bound (what every split returns): the most loaded member holds at most the largest file's size more
 * bytes than the least loaded one. A fresh split places files largest first onto the least loaded member (ties:
 * earlier in ring order); a re-split keeps the previous owners', places the orphaned and new files the same way,
 * then moves files from the most to the least loaded member only while the bound is broken.
 */

export interface DataFile {
  /** Path relative to the data folder. */
  name: string;
  size: number;
}

/** Member key (the node's name) → its file names, sorted. Every member in ring order has an entry. */
export type DataFileSplit = Record<string, string[]>;

interface Load {
  key: string;
  ring: number;
  bytes: number;
  files: Map<string, number>;
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Largest first, then name: one order for every caller. */
function largestFirst(a: DataFile, b: DataFile): number {
  return b.size - a.size || byName(a.name, b.name);
}

function leastLoaded(loads: readonly Load[]): Load {
  let best = loads[0]!;
  for (const load of loads) if (load.bytes < best.bytes) best = load;
  return best;
}

function mostLoaded(loads: readonly Load[]): Load {
  let best = loads[0]!;
  for (const load of loads) if (load.bytes > best.bytes) best = load;
  return best;
}

function place(load: Load, file: DataFile): void {
  load.files.set(file.name, file.size);
  load.bytes += file.size;
}

/** The file on `from` whose move to `to` narrows their gap the most (its size nearest half the gap), by name on ties. */
function fileToMove(from: Load, gap: number): DataFile | null {
  let best: DataFile | null = null;
  for (const [name, size] of from.files) {
    if (size <= 0 || size >= gap) continue;
    const candidate = { name, size };
    if (!best) best = candidate;
    else {
      const d = Math.abs(gap / 2 - size) - Math.abs(gap / 2 - best.size);
      if (d < 0 || (d === 0 && byName(name, best.name) < 0)) best = candidate;
    }
  }
  return best;
}

/** Moves files from the most to the least loaded member until the spread is within the largest file's size. */
function rebalance(loads: Load[], largest: number): void {
  for (;;) {
    const high = mostLoaded(loads);
    const low = leastLoaded(loads);
    const gap = high.bytes - low.bytes;
    if (gap <= largest) return;
    // Every file on `high` is ≤ largest < gap, and high holds more than low ≥ 0 bytes: one positive file exists,
    // and moving it strictly lowers the sum of squared loads, so this ends.
    const file = fileToMove(high, gap);
    if (!file) return;
    high.files.delete(file.name);
    high.bytes -= file.size;
    place(low, file);
  }
}

/**
 * Splits `files` over `ring` (member keys in ring order). With `previous` (the last generation's split), a file whose
 * owner is still in the ring stays there unless the balance bound makes it move. Duplicate names count once.
 */
export function splitDataFiles(files: readonly DataFile[], ring: readonly string[], previous?: DataFileSplit | null): DataFileSplit {
  const keys = [...new Set(ring)];
  if (keys.length === 0) return {};
  const unique = new Map<string, DataFile>();
  for (const file of files) if (!unique.has(file.name)) unique.set(file.name, { name: file.name, size: Math.max(0, file.size) });
  const loads: Load[] = keys.map((key, ring) => ({ key, ring, bytes: 0, files: new Map() }));
  const byKey = new Map(loads.map((l) => [l.key, l]));
  const owner = new Map<string, string>();
  for (const [key, names] of Object.entries(previous ?? {})) for (const name of names) if (!owner.has(name)) owner.set(name, key);
  const orphans: DataFile[] = [];
  for (const file of [...unique.values()].sort(largestFirst)) {
    const kept = byKey.get(owner.get(file.name) ?? '');
    if (kept) place(kept, file);
    else orphans.push(file);
  }
  for (const file of orphans) place(leastLoaded(loads), file);
  const largest = Math.max(0, ...[...unique.values()].map((f) => f.size));
  rebalance(loads, largest);
  return Object.fromEntries(loads.map((load) => [load.key, [...load.files.keys()].sort(byName)]));
}

/** How many files changed owner between two splits (a file new in `next` is not a move). */
export function movedFiles(previous: DataFileSplit, next: DataFileSplit): number {
  const before = new Map<string, string>();
  for (const [key, names] of Object.entries(previous)) for (const name of names) before.set(name, key);
  let moved = 0;
  for (const [key, names] of Object.entries(next)) for (const name of names) if (before.has(name) && before.get(name) !== key) moved++;
  return moved;
}
