/**
 * The geometry of a run chart (loss or samples/s against step or time) as a pure function of its series: the
 * scales, each line's path, the tick marks with their labels, and where each generation mark stands. The
 * component (xy-chart.tsx) only draws it and asks it what is under the pointer.
 */
import { clockStep, linePath, linearTicks, logTicks, makeScale, nearestIndex, niceStep, tickLabel, type AxisKind, type Scale } from './chart-math';

export const XY_W = 560;
export const XY_H = 210;
export const XY_PLOT = { left: 54, right: 14, top: 12, bottom: 30 } as const;

export interface XySeries {
  key: string;
  label: string;
  color: string;
  xs: readonly number[];
  ys: readonly number[];
  /** Drawn thin and faint (the raw values under a smoothed line). */
  faint?: boolean;
  /** A dot at each point (a sweep's jobs), not a line alone. */
  dots?: boolean;
}

export interface XyMark {
  x: number;
  label: string;
  title: string;
  /** A generation's start (default), or where a worker's part ended: drawn in the colour of how. */
  kind?: 'generation' | 'failed' | 'left';
}

export interface XyInput {
  series: readonly XySeries[];
  marks?: readonly XyMark[];
  yKind?: AxisKind;
  /** Labels of x values on the axis (a step number, "−2 min"). */
  xFormat?: (x: number, step: number) => string;
  /** Start the y axis at 0 (samples/s) rather than at the lowest value (loss). */
  yFromZero?: boolean;
  /** x is seconds: ticks at clock steps (15 s, 1 min, 5 min…) rather than 1-2-5 steps. */
  xClock?: boolean;
  /** A fixed y domain (0–100 for percentages) instead of the data's. */
  yRange?: [number, number];
  /** The x span to draw at least (the run's start to its end), so charts of one run share their axis. */
  xRange?: [number, number];
  /** The x span a person zoomed to (xy-chart.tsx): the axis shows it alone, y fits the points inside it. */
  xZoom?: readonly [number, number] | null;
}

export interface XyModel {
  /** Width of the viewBox: the chart's width on screen, so its text is drawn at its real size. */
  width: number;
  x: Scale;
  y: Scale;
  lines: { key: string; color: string; path: string; faint: boolean; dots?: { cx: number; cy: number }[] }[];
  xTicks: { px: number; label: string }[];
  yTicks: { px: number; label: string }[];
  marks: { px: number; label: string; title: string; kind: NonNullable<XyMark['kind']> }[];
}

const bottom = XY_H - XY_PLOT.bottom;
/** Narrower than this, the labels would collide: the chart is drawn at this width and scaled down. */
export const MIN_XY_W = 240;

function extent(values: readonly number[], positiveOnly: boolean): [number, number] | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (!Number.isFinite(v) || (positiveOnly && v <= 0)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return lo <= hi ? [lo, hi] : null;
}

/** Ticks whose labels repeat (rounding) would draw the same words twice and share a React key: the first stays. */
function distinctLabels<T extends { label: string }>(ticks: T[]): T[] {
  const seen = new Set<string>();
  return ticks.filter((t) => !seen.has(t.label) && seen.add(t.label));
}

/** Null when no series has a point to draw. `width` is the chart's width in CSS pixels (default XY_W). */
export function xyChart(input: XyInput, width = XY_W): XyModel | null {
  const w = Math.max(MIN_XY_W, Math.round(width));
  const right = w - XY_PLOT.right;
  const yKind = input.yKind ?? 'linear';
  const zoom = input.xZoom && input.xZoom[1] > input.xZoom[0] ? input.xZoom : null;
  const xe = zoom ? ([zoom[0], zoom[1]] as [number, number]) : extent([...input.series.flatMap((s) => s.xs), ...(input.xRange ?? [])], false);
  const inside = (s: XySeries) => (zoom ? s.ys.filter((_, i) => s.xs[i]! >= zoom[0] && s.xs[i]! <= zoom[1]) : s.ys);
  const ye = extent(input.series.flatMap(inside), yKind === 'log') ?? extent(input.series.flatMap((s) => s.ys), yKind === 'log');
  if (!xe || !ye) return null;
  const x = makeScale('linear', xe[0], xe[1], XY_PLOT.left, right);
  const yMin = input.yRange?.[0] ?? (input.yFromZero && yKind === 'linear' ? Math.min(0, ye[0]) : ye[0]);
  const y = makeScale(yKind, yMin, input.yRange?.[1] ?? ye[1], bottom, XY_PLOT.top);
  const lines = input.series.map((s) => ({
    key: s.key,
    color: s.color,
    faint: s.faint ?? false,
    path: linePath(s.xs.map(x.map), s.ys.map((v) => (yKind === 'log' && !(v > 0) ? NaN : y.map(v)))),
    ...(s.dots ? { dots: s.xs.map((v, i) => ({ cx: x.map(v), cy: y.map(s.ys[i]!) })).filter((d) => Number.isFinite(d.cx) && Number.isFinite(d.cy)) } : {}),
  }));
  // About one x tick per 70 px, so a narrow chart's labels do not run into each other.
  const xCount = Math.max(3, Math.min(8, Math.floor((right - XY_PLOT.left) / 70)));
  const xStep = input.xClock ? clockStep(x.max - x.min, xCount) : niceStep(x.max - x.min, xCount);
  const xFormat = input.xFormat ?? ((v: number, step: number) => tickLabel(v, step));
  const xTicks = distinctLabels(linearTicks(x.min, x.max, xCount, xStep).map((v) => ({ px: x.map(v), label: xFormat(v, xStep) })));
  const yValues = yKind === 'log' ? logTicks(y.min, y.max) : linearTicks(y.min, y.max, 5);
  const yStep = yKind === 'log' ? 0 : niceStep(y.max - y.min, 5);
  const yTicks = distinctLabels(yValues.map((v) => ({ px: y.map(v), label: yKind === 'log' ? tickLabel(v, v / 10) : tickLabel(v, yStep) })));
  const marks = (input.marks ?? [])
    .filter((m) => m.x >= x.min && m.x <= x.max)
    .map((m) => ({ px: x.map(m.x), label: m.label, title: m.title, kind: m.kind ?? 'generation' }));
  return { width: w, x, y, lines, xTicks, yTicks, marks };
}

/** The index of `series`' point nearest the pointer at chart x `px` (viewBox units), or -1. */
export function pointAt(model: XyModel, series: XySeries, px: number): number {
  return nearestIndex(series.xs, model.x.invert(px));
}
