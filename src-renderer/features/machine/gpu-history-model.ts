/**
 * The geometry and the words of the GPU history charts, as pure functions over a GpuHistory, so tests pin
 * them without a DOM. Values are drawn as steps: a value holds until the next sample, because the live
 * updates carry only changes (an unchanged poll sends nothing) and a slanted line would invent a ramp.
 */
import type { GpuHistory, GpuHistorySeries } from '../../../src-shared/hardware';
import { formatDuration, formatMb } from '../../ui/format';

export type GpuMetric = 'utilization' | 'memory';

export const CHART_W = 560;
export const CHART_H = 170;
export const PLOT = { left: 60, right: 10, top: 10, bottom: 26 } as const;

/** Distinct in light and dark themes; the first is the theme's accent. */
const PALETTE = ['var(--accent)', '#d97706', '#16a34a', '#a855f7', '#db2777', '#0891b2', '#65a30d', '#dc2626'];

export function seriesColor(position: number): string {
  return PALETTE[position % PALETTE.length]!;
}

export function gpuLabel(series: Pick<GpuHistorySeries, 'index' | 'name'>): string {
  return `GPU ${series.index} · ${series.name}`;
}

/** The series' values in percent: utilisation as reported, memory as a share of the GPU's total. */
export function percentValues(series: GpuHistorySeries, metric: GpuMetric): (number | null)[] {
  if (metric === 'utilization') return series.utilizationPct;
  const total = series.vramTotalMb;
  return series.vramUsedMb.map((used) => (used === null || !total ? null : Math.min(100, (used / total) * 100)));
}

/**
 * Where the chart ends, on the main process's clock: the newest sample's time plus how long ago (on this
 * page's clock) it arrived. The page may run on another machine (headless over a tunnel) with another clock.
 */
export function chartEnd(history: GpuHistory, receivedAt: number, pageNow: number): number | null {
  const newest = history.times[history.times.length - 1];
  return newest === undefined ? null : newest + Math.max(0, pageNow - receivedAt);
}

export interface ChartLine {
  key: string;
  color: string;
  /** SVG path in viewBox units; empty when the series has no value in the window. */
  path: string;
}

export interface ChartModel {
  lines: ChartLine[];
  xTicks: { x: number; label: string }[];
  yTicks: { y: number; label: string }[];
}

const plotW = CHART_W - PLOT.left - PLOT.right;
const plotH = CHART_H - PLOT.top - PLOT.bottom;

/** Step lines of every GPU for `metric` over [end − window, end], with 0/50/100 % and minute ticks. */
export function gpuChart(history: GpuHistory, metric: GpuMetric, end: number): ChartModel {
  const start = end - history.windowMs;
  const x = (t: number) => PLOT.left + (Math.min(Math.max(t, start), end) - start) / (history.windowMs / plotW);
  const y = (pct: number) => PLOT.top + (1 - pct / 100) * plotH;
  const lines = history.gpus.map((series, position): ChartLine => {
    const values = percentValues(series, metric);
    const parts: string[] = [];
    let drawing = false;
    values.forEach((value, i) => {
      if (value === null) {
        drawing = false;
        return;
      }
      const from = x(history.times[i]!);
      const to = x(history.times[i + 1] ?? end);
      const level = y(value).toFixed(1);
      parts.push(`${drawing ? 'L' : 'M'}${from.toFixed(1)},${level} L${to.toFixed(1)},${level}`);
      drawing = true;
    });
    return { key: series.key, color: seriesColor(position), path: parts.join(' ') };
  });
  const minutes = history.windowMs / 60_000;
  const step = minutes > 5 ? 2 : 1;
  const xTicks: ChartModel['xTicks'] = [];
  for (let m = Math.floor(minutes / step) * step; m > 0; m -= step) xTicks.push({ x: x(end - m * 60_000), label: `−${m} min` });
  xTicks.push({ x: x(end), label: 'now' });
  const yTicks = [0, 50, 100].map((pct) => ({ y: y(pct), label: `${pct} %` }));
  return { lines, xTicks, yTicks };
}

/** One sentence per GPU, for the legend and screen readers: now, low, high, and over how long. */
export function gpuSummary(history: GpuHistory, series: GpuHistorySeries, metric: GpuMetric): string {
  const span = history.times.length > 1 ? history.times[history.times.length - 1]! - history.times[0]! : 0;
  const over = `over the last ${formatDuration(span)}`;
  if (metric === 'utilization') {
    const values = series.utilizationPct.filter((v): v is number => v !== null);
    if (values.length === 0) return 'utilisation not reported';
    const now = series.utilizationPct[series.utilizationPct.length - 1];
    return `${now === null || now === undefined ? 'now not reported' : `now ${now} %`}, low ${Math.min(...values)} %, high ${Math.max(...values)} % ${over}`;
  }
  const used = series.vramUsedMb.filter((v): v is number => v !== null);
  if (used.length === 0) return 'memory use not reported';
  const now = series.vramUsedMb[series.vramUsedMb.length - 1];
  const total = series.vramTotalMb ? ` of ${formatMb(series.vramTotalMb)}` : '';
  const share = now !== null && now !== undefined && series.vramTotalMb ? ` (${Math.round((now / series.vramTotalMb) * 100)} %)` : '';
  const current = now === null || now === undefined ? 'now not reported' : `now ${formatMb(now)}${total}${share}`;
  return `${current}, low ${formatMb(Math.min(...used))}, peak ${formatMb(Math.max(...used))} ${over}`;
}
