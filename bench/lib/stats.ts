/**
 * Summary figures and plain tables for benchmark output: every bench prints the same way, and every median and
 * percentile a bench reports comes from percentile() here (nearest rank), so figures compare across benches.
 */

export interface Summary {
  n: number;
  mean: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of ascending `sorted` (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  return {
    n,
    mean: n === 0 ? NaN : sorted.reduce((a, b) => a + b, 0) / n,
    min: n === 0 ? NaN : sorted[0]!,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: n === 0 ? NaN : sorted[n - 1]!,
  };
}

export function median(samples: readonly number[]): number {
  return summarize(samples).p50;
}

/** Prints rows under a header, columns padded; numbers should already be formatted. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

export function seconds(ms: number, digits = 2): string {
  return Number.isFinite(ms) ? `${(ms / 1000).toFixed(digits)} s` : '-';
}
