/**
 * Thinning a series past its cap: drop the points in its most crowded stretches (the first and the newest stay),
 * so a long series keeps its whole shape at a coarser grain. Its own file because both a run's series
 * (runs/run-series.ts) and a worker's resource history (resources/worker-resources.ts) thin, and the run's series
 * holds resource histories: one file importing the other both ways was an import circle. Pure: no node:*.
 */

/**
 * Which points of a series whose times are `at` to keep (null: all, while it holds at most `cap`). Past the cap
 * it thins to an eighth below it (so thinning runs once every cap/8 points, not at each), dropping each time
 * the inner point whose neighbours lie closest together: the points stay evenly spread over the whole run, and
 * the first and the newest are never dropped.
 */
export function thinningMask(at: readonly number[], cap: number): boolean[] | null {
  if (at.length <= cap || at.length < 3) return null;
  const target = Math.max(2, cap - Math.floor(cap / 8));
  const keep = at.map(() => true);
  // Indices still kept, as a doubly linked list over `at`.
  const prev = at.map((_, i) => i - 1);
  const next = at.map((_, i) => i + 1);
  for (let left = at.length; left > target; left--) {
    let best = -1;
    for (let i = next[0]!; i < at.length - 1; i = next[i]!) {
      if (best < 0 || at[next[i]!]! - at[prev[i]!]! < at[next[best]!]! - at[prev[best]!]!) best = i;
    }
    keep[best] = false;
    next[prev[best]!] = next[best]!;
    prev[next[best]!] = prev[best]!;
  }
  return keep;
}

/** `list` filtered by a thinning mask (the same list for null). */
export function thinned<T>(list: T[], mask: readonly boolean[] | null): T[] {
  return mask ? list.filter((_, i) => mask[i]) : list;
}
