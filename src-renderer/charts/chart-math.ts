/**
 * The numbers behind the run charts, as pure functions a test pins without a DOM: "nice" tick values (1, 2, 5
 * × 10ⁿ) for a linear axis and powers of ten for a log one, a scale from data to pixels (linear or log), the
 * exponential moving average the smoothing slider applies (debiased, so the first points are not pulled to 0),
 * and the point nearest the pointer for the hover readout.
 */

export type AxisKind = 'linear' | 'log';

/** Smallest positive value a log axis shows; a loss of 0 (or below) is drawn at this floor. */
export const LOG_FLOOR = 1e-6;

export interface Scale {
  kind: AxisKind;
  /** Data domain actually used (for log: both ends positive). */
  min: number;
  max: number;
  /** Data value → pixel in [from, to] (to may be smaller than from: y grows downwards). */
  map(value: number): number;
  /** Pixel → data value, the inverse of map. */
  invert(px: number): number;
}

/** A scale from [min, max] onto [from, to]; an empty domain (min = max) is widened so the line sits mid-way. */
export function makeScale(kind: AxisKind, min: number, max: number, from: number, to: number): Scale {
  let lo = kind === 'log' ? Math.max(min, LOG_FLOOR) : min;
  let hi = kind === 'log' ? Math.max(max, LOG_FLOOR) : max;
  // A range within rounding of its values (a flat loss smoothed by the EMA comes out 1.4999999999999998 to
  // 1.5000000000000002) is flat too: ticks a 1e-16 apart would all print "1.5".
  if (!(hi - lo > Math.max(Math.abs(lo), Math.abs(hi)) * 1e-9)) {
    if (kind === 'log') {
      lo /= 10 ** 0.5;
      hi *= 10 ** 0.5;
    } else {
      const pad = Math.abs(lo) > 0 ? Math.abs(lo) * 0.1 : 1;
      lo -= pad;
      hi += pad;
    }
  }
  const f = kind === 'log' ? Math.log10 : (v: number) => v;
  const fi = kind === 'log' ? (v: number) => 10 ** v : (v: number) => v;
  const a = f(lo);
  const b = f(hi);
  return {
    kind,
    min: lo,
    max: hi,
    map: (value) => {
      const v = kind === 'log' ? Math.max(value, LOG_FLOOR) : value;
      return from + ((f(v) - a) / (b - a)) * (to - from);
    },
    invert: (px) => fi(a + ((px - from) / (to - from)) * (b - a)),
  };
}

/** The step between ticks: 1, 2 or 5 × 10ⁿ, so about `count` ticks cover `span`. */
export function niceStep(span: number, count: number): number {
  if (!(span > 0) || !Number.isFinite(span)) return 1;
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = raw / power;
  const nice = unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10;
  return nice * power;
}

/** Steps a clock axis ticks at, in seconds: what a person reads off a watch (15 s, 1 min, 5 min, 1 h…). */
const CLOCK_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

/** The clock step (seconds) that covers `span` seconds in about `count` ticks. */
export function clockStep(span: number, count: number): number {
  const raw = span / Math.max(1, count);
  return CLOCK_STEPS.find((s) => s >= raw) ?? niceStep(span, count);
}

/** Tick values for a linear axis over [min, max]: multiples of a nice step (or of `step`), inside the domain. */
export function linearTicks(min: number, max: number, count = 5, step = niceStep(max - min, count)): number[] {
  if (!(max >= min) || !Number.isFinite(min) || !Number.isFinite(max)) return [];
  if (max === min) return [min];
  const first = Math.ceil(min / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let v = first; v <= max + step * 1e-9 && ticks.length < 50; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

/**
 * Tick values for a log axis over [min, max]: the powers of ten inside it, with 2 and 5 × 10ⁿ as well when
 * there are fewer than three of them (a loss from 0.4 to 2.3 still gets labelled ticks).
 */
export function logTicks(min: number, max: number): number[] {
  const lo = Math.max(min, LOG_FLOOR);
  if (!(max >= lo)) return [];
  const first = Math.floor(Math.log10(lo));
  const last = Math.ceil(Math.log10(max));
  const powers: number[] = [];
  for (let e = first; e <= last && powers.length < 40; e++) powers.push(10 ** e);
  const inside = (v: number) => v >= lo * (1 - 1e-9) && v <= max * (1 + 1e-9);
  const decades = powers.filter(inside);
  if (decades.length >= 3) return decades.map((v) => Number(v.toPrecision(12)));
  const fine = powers.flatMap((p) => [p, 2 * p, 5 * p]).filter(inside);
  return fine.map((v) => Number(v.toPrecision(12)));
}

/** Tick label: as few digits as tell the ticks apart ("0.5", "1.25", "2k", "1e-4"). */
export function tickLabel(value: number, step: number): string {
  if (value === 0) return '0';
  const abs = Math.abs(value);
  if (abs >= 10_000) return `${Number((value / 1000).toPrecision(3))}k`;
  if (abs < 1e-3) return value.toExponential(0);
  const decimals = step > 0 && step < 1 ? Math.min(6, Math.ceil(-Math.log10(step) - 1e-9)) : 0;
  return String(Number(value.toFixed(decimals)));
}

/**
 * Exponential moving average with weight `smoothing` in [0, 1) on the past (0: the raw values), debiased like
 * TensorBoard's: the first value is itself, not pulled towards 0. A run that restarted (a new generation) starts
 * a fresh average where `breaks` says, so a relaunch's jump is not smeared over the old curve.
 */
export function ema(values: readonly number[], smoothing: number, breaks: ReadonlySet<number> = new Set()): number[] {
  const w = Math.min(Math.max(smoothing, 0), 0.999);
  if (w === 0) return [...values];
  const out: number[] = [];
  let acc = 0;
  let weight = 0;
  values.forEach((v, i) => {
    if (breaks.has(i)) {
      acc = 0;
      weight = 0;
    }
    if (!Number.isFinite(v)) {
      out.push(v);
      return;
    }
    acc = acc * w + (1 - w) * v;
    weight = weight * w + (1 - w);
    out.push(acc / weight);
  });
  return out;
}

/** Index of the value in `sorted` (ascending) nearest to `x`; -1 when empty. */
export function nearestIndex(sorted: readonly number[], x: number): number {
  if (sorted.length === 0) return -1;
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && Math.abs(sorted[lo - 1]! - x) <= Math.abs(sorted[lo]! - x)) return lo - 1;
  return lo;
}

/** An SVG path through (x, y) pairs; a non-finite y lifts the pen. */
export function linePath(xs: readonly number[], ys: readonly number[]): string {
  const parts: string[] = [];
  let pen = false;
  xs.forEach((x, i) => {
    const y = ys[i]!;
    if (!Number.isFinite(y) || !Number.isFinite(x)) {
      pen = false;
      return;
    }
    parts.push(`${pen ? 'L' : 'M'}${x.toFixed(1)},${y.toFixed(1)}`);
    pen = true;
  });
  return parts.join(' ');
}
