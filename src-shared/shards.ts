/**
 * How N samples are split over the workers of a run (entrenar's rule, C-SHARD-001): contiguous half-open
 * ranges in the order given, the first `N mod n` workers get one sample more. Disjoint and complete by
 * construction. Pure, so the coordinator, the Shard map view and the trainer's docs all agree on one rule.
 */

export interface ShardAssignment {
  workerId: number;
  /** First sample index (inclusive). */
  start: number;
  /** One past the last sample index. */
  end: number;
}

/** Splits [0, total) over `workerIds` in that order; an empty list gets no shards. */
export function assignShards(total: number, workerIds: readonly number[]): ShardAssignment[] {
  const n = workerIds.length;
  if (n === 0) return [];
  const samples = Math.max(0, Math.floor(total));
  const base = Math.floor(samples / n);
  const extra = samples % n;
  const out: ShardAssignment[] = [];
  let start = 0;
  for (let i = 0; i < n; i++) {
    const size = i < extra ? base + 1 : base;
    out.push({ workerId: workerIds[i]!, start, end: start + size });
    start += size;
  }
  return out;
}
