// Issue 17, charts worth reading: nice ticks on a linear axis and powers of ten on a log one, a scale that
// inverts, the debiased EMA behind the smoothing slider (restarting at a new generation), the nearest point for
// the hover readout, the loss chart's geometry (axes, marks, log), and samples/s recorded per run over time.
import { describe, expect, it } from 'vitest';
import { clockStep, ema, linearTicks, logTicks, makeScale, nearestIndex, niceStep, tickLabel } from '../../../src-renderer/charts/chart-math';
import { MAX_THROUGHPUT_POINTS, MAX_THROUGHPUT_RUNS, recordRun, recordRuns, startThroughputRecorder, type ThroughputByRun } from '../../../src-renderer/features/runs/charts/run-throughput';
import { createAppStore } from '../../../src-renderer/store/app-store';
import { setRuns } from '../../../src-renderer/features/runs/runs-slice';
import { createStore } from 'zustand/vanilla';
import { clockLabel } from '../../../src-renderer/features/runs/charts/throughput-chart';
import { MIN_XY_W, pointAt, XY_PLOT, XY_W, xyChart } from '../../../src-renderer/charts/xy-chart-model';
import type { RunSnapshot } from '../../../src-shared/training';
import { runSnapshot } from '../helpers/snapshots';

describe('chart math', () => {
  it('puts ticks at 1, 2, 5 × 10ⁿ inside the domain, labelled with the digits they need', () => {
    expect(niceStep(100, 5)).toBe(20);
    expect(niceStep(0.7, 4)).toBe(0.2);
    expect(linearTicks(0, 299, 6)).toEqual([0, 50, 100, 150, 200, 250]);
    expect(linearTicks(1.93, 2.41, 4)).toEqual([2, 2.2, 2.4]);
    expect(linearTicks(1.93, 2.41, 8)).toEqual([2, 2.1, 2.2, 2.3, 2.4]);
    expect(linearTicks(3, 3)).toEqual([3]);
    expect(tickLabel(2.1, 0.1)).toBe('2.1');
    expect(tickLabel(0.25, 0.05)).toBe('0.25');
    expect(tickLabel(20_000, 5000)).toBe('20k');
    expect(tickLabel(1e-4, 1e-5)).toBe('1e-4');
  });

  it('gives a log axis its decades, or 1-2-5 ticks when it spans less than three', () => {
    expect(logTicks(0.003, 40)).toEqual([0.01, 0.1, 1, 10]);
    expect(logTicks(0.4, 2.3)).toEqual([0.5, 1, 2]);
    const y = makeScale('log', 0.01, 100, 200, 0);
    expect(y.map(1)).toBeCloseTo(100);
    expect(y.invert(y.map(0.5))).toBeCloseTo(0.5);
    expect(y.map(0)).toBe(y.map(1e-6)); // a zero loss sits at the floor instead of -Infinity
    const flat = makeScale('linear', 2, 2, 0, 100);
    expect(flat.map(2)).toBeCloseTo(50);
  });

  it('smooths with a debiased EMA that starts again at a new generation', () => {
    expect(ema([4, 4, 4], 0.9)).toEqual([4, 4, 4]);
    expect(ema([1, 2, 3], 0)).toEqual([1, 2, 3]);
    const s = ema([0, 10], 0.5);
    expect(s[0]).toBe(0);
    expect(s[1]).toBeCloseTo(10 * 0.5 / 0.75);
    const broken = ema([1, 1, 9, 9], 0.9, new Set([2]));
    expect(broken[2]).toBe(9);
  });

  it('finds the point nearest the pointer', () => {
    expect(nearestIndex([0, 10, 20], 14)).toBe(1);
    expect(nearestIndex([0, 10, 20], 16)).toBe(2);
    expect(nearestIndex([0, 10, 20], -5)).toBe(0);
    expect(nearestIndex([], 3)).toBe(-1);
  });
});

describe('the chart model', () => {
  const series = { key: 'loss', label: 'loss', color: 'red', xs: [0, 100, 200, 300], ys: [2.3, 1.2, 0.4, 0.05] };

  it('lays out step ticks, loss ticks, the line and a generation mark on the plot', () => {
    const m = xyChart({ series: [series], marks: [{ x: 150, label: 'gen 2', title: 'worker beta failed' }, { x: 900, label: 'gen 3', title: 'off the curve' }] })!;
    expect(m.xTicks.map((t) => t.label)).toEqual(['0', '50', '100', '150', '200', '250', '300']);
    // Drawn at its width on screen: a narrow chart gets fewer step ticks, and is not squeezed below MIN_XY_W.
    expect(xyChart({ series: [series] }, 280)!.xTicks.map((t) => t.label)).toEqual(['0', '100', '200', '300']);
    expect(xyChart({ series: [series] }, 100)!.width).toBe(MIN_XY_W);
    expect(m.xTicks[0]!.px).toBe(XY_PLOT.left);
    expect(m.yTicks.map((t) => t.label)).toEqual(['0.5', '1', '1.5', '2']);
    expect(m.marks).toEqual([{ px: (XY_PLOT.left + XY_W - XY_PLOT.right) / 2, label: 'gen 2', title: 'worker beta failed', kind: 'generation' }]);
    expect(m.lines[0]!.path.startsWith(`M${XY_PLOT.left.toFixed(1)},`)).toBe(true);
    expect(pointAt(m, series, XY_W - XY_PLOT.right - 1)).toBe(3);
    expect(xyChart({ series: [{ ...series, xs: [], ys: [] }] })).toBeNull();
  });

  it('uses decades on a log axis and starts samples/s at zero', () => {
    const log = xyChart({ series: [series], yKind: 'log' })!;
    expect(log.yTicks.map((t) => t.label)).toEqual(['0.05', '0.1', '0.2', '0.5', '1', '2']);
    const rate = xyChart({ series: [{ ...series, ys: [280, 300, 290, 295] }], yFromZero: true })!;
    expect(rate.yTicks[0]!.label).toBe('0');
    // A time axis ticks at clock steps: 0:00, 1:00, 2:00 … rather than 0:50, 1:40.
    expect(clockStep(600, 6)).toBe(120);
    expect(clockStep(8, 3)).toBe(5);
    const clock = xyChart({ series: [{ ...series, xs: [0, 100, 300, 600] }], xClock: true, xFormat: (v) => clockLabel(v) }, 560)!;
    expect(clock.xTicks.map((t) => t.label)).toEqual(['0:00', '2:00', '4:00', '6:00', '8:00', '10:00']);
  });

  it('zoomed to an x range, shows that range alone with y fitted to the points inside it (issue 25)', () => {
    const z = xyChart({ series: [series], xZoom: [150, 300], marks: [{ x: 100, label: 'gen 2', title: 'before the range' }] })!;
    expect([z.x.min, z.x.max]).toEqual([150, 300]);
    // Only 0.4 and 0.05 are inside: y no longer reaches up to 2.3.
    expect(z.y.max).toBeLessThan(1);
    expect(z.marks).toEqual([]);
    // An empty range keeps the whole chart; a range with no point inside keeps y over all of them.
    expect(xyChart({ series: [series], xZoom: [200, 200] })!.x.max).toBe(300);
    expect(xyChart({ series: [series], xZoom: [110, 190] })!.y.max).toBeGreaterThan(2);
  });
});

describe('samples/s over time', () => {
  const base = runSnapshot({ id: 'r', startedAt: 1000 });
  function at(t: number, total: number | null, rows: [number, string, number | null][]): RunSnapshot {
    return {
      ...base,
      progress: { step: t, totalSteps: null, loss: 1, samplesPerSec: total, resumedFrom: null, at: t },
      workerRows: rows.map(([workerId, node, sps]) => ({ workerId, node, member: true, step: 1, loss: 1, samplesPerSec: sps, restartsCaused: 0 })),
    };
  }

  it('records the run total and each member at each newer progress, and ignores a repeat', () => {
    let s = recordRun(undefined, at(2000, 300, [[1, 'alpha', 150], [2, 'beta', 150]]));
    s = recordRun(s, at(2000, 999, []));
    s = recordRun(s, at(3000, 150, [[1, 'alpha', 150]]));
    expect(s!.at).toEqual([2000, 3000]);
    expect(s!.total).toEqual([300, 150]);
    expect(s!.workers[2]).toEqual({ node: 'beta', values: [150, null] });
    expect(recordRun(undefined, { ...base, progress: null })).toBeUndefined();
  });

  it('is bounded per run and in runs kept', () => {
    let s = recordRun(undefined, at(1, 1, []));
    for (let t = 2; t < MAX_THROUGHPUT_POINTS + 50; t++) s = recordRun(s, at(t, t, []));
    expect(s!.at.length).toBeLessThanOrEqual(MAX_THROUGHPUT_POINTS);
    expect(s!.at[0]).toBe(1); // thinned over the whole run, its start kept (run-series.ts)
    expect(s!.at.at(-1)).toBe(MAX_THROUGHPUT_POINTS + 49);
    let byRun = {};
    for (let i = 0; i < MAX_THROUGHPUT_RUNS + 3; i++) byRun = recordRuns(byRun, [{ ...at(5, 1, []), id: `run-${i}` }]);
    expect(Object.keys(byRun)).toHaveLength(MAX_THROUGHPUT_RUNS);
    expect(Object.keys(byRun)).not.toContain('run-0');
    // Wired to the app store: each new runs list is folded in, and nothing after stop.
    const app = createAppStore();
    const store = createStore<ThroughputByRun>()(() => ({}));
    const stop = startThroughputRecorder(app, store);
    app.setState(setRuns(app.getState(), [at(7, 42, [])]));
    expect(store.getState()['r']?.total).toEqual([42]);
    stop();
    app.setState(setRuns(app.getState(), [at(8, 43, [])]));
    expect(store.getState()['r']?.total).toEqual([42]);
    expect(clockLabel(65)).toBe('1:05');
    expect(clockLabel(3725)).toBe('1:02:05');
  });
});

describe('a flat series within rounding (e2e runs-list: React saw the key "y1.5" twice)', () => {
  it('gets distinct tick labels, as a flat series does', () => {
    const ys = ema(Array.from({ length: 40 }, () => 1.5), 0.6);
    expect(Math.max(...ys) - Math.min(...ys)).toBeLessThan(1e-12);
    for (const yKind of ['linear', 'log'] as const) {
      const model = xyChart({ series: [{ key: 'loss', label: 'loss', color: '#000', xs: ys.map((_, i) => i), ys }], yKind })!;
      const labels = model.yTicks.map((t) => t.label);
      expect(new Set(labels).size).toBe(labels.length);
      expect(labels.length).toBeGreaterThan(0);
    }
    expect(makeScale('linear', 1.4999999999999998, 1.5000000000000002, 0, 100).min).toBeCloseTo(1.35, 9);
  });
});
