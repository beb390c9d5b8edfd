/**
 * The sweep as a plot (Jobs view, issue 25): one job's metric (a metrics.json value, or its last loss) against one
 * of its hyper values, a point per job that has both, and the best job marked — the lowest for a name that reads
 * as an error (loss, error, perplexity…), the highest otherwise (accuracy, f1). Pure, built on the sweep table's
 * rows and columns (sweep-table.ts).
 */
import type { SweepColumn, SweepRow } from './sweep-table';

export interface SweepPoint {
  x: number;
  y: number;
  name: string;
}

export interface SweepPlotModel {
  points: SweepPoint[];
  best: SweepPoint | null;
  lowerIsBetter: boolean;
}

/** Names whose smaller values are better. */
const LOWER_IS_BETTER = /loss|err|perplex|ppl|mse|mae|rmse|wer|cer|time|duration/i;

export function lowerIsBetter(column: SweepColumn): boolean {
  return LOWER_IS_BETTER.test(column.key);
}

/** The columns that can be plotted: hyper values on x, metrics and the last loss on y. */
export function plotAxes(columns: readonly SweepColumn[]): { xs: SweepColumn[]; ys: SweepColumn[] } {
  return {
    xs: columns.filter((c) => c.key.startsWith('hyper:')),
    ys: columns.filter((c) => c.key.startsWith('metric:') || c.key === 'loss'),
  };
}

/** Each job with a number in both columns, by x; the best by y. */
export function sweepPlot(rows: readonly SweepRow[], x: SweepColumn, y: SweepColumn): SweepPlotModel {
  const points: SweepPoint[] = [];
  for (const r of rows) {
    const xv = r.cells[x.key];
    const yv = r.cells[y.key];
    if (typeof xv === 'number' && Number.isFinite(xv) && typeof yv === 'number' && Number.isFinite(yv)) points.push({ x: xv, y: yv, name: String(r.cells.name) });
  }
  points.sort((a, b) => a.x - b.x || a.y - b.y);
  const lower = lowerIsBetter(y);
  let best: SweepPoint | null = null;
  for (const p of points) if (!best || (lower ? p.y < best.y : p.y > best.y)) best = p;
  return { points, best, lowerIsBetter: lower };
}
