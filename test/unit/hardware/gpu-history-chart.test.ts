// The GPU history chart's geometry and words (src-renderer/features/machine/gpu-history-model.ts): steps that hold a
// value until the next sample, gaps where a value was not reported, the window's ticks, the end on the main
// process's clock, and the text summary.
import { describe, expect, it } from 'vitest';
import { chartEnd, CHART_H, CHART_W, gpuChart, gpuSummary, percentValues, PLOT } from '../../../src-renderer/features/machine/gpu-history-model';
import { appendGpuSample, emptyGpuHistory, type GpuHistory } from '../../../src-shared/hardware';
import { detectedGpu } from '../helpers/detected-gpu';

const MIN = 60_000;

function history(samples: [number, number | null, number | null][], windowMs = 10 * MIN): GpuHistory {
  let h = emptyGpuHistory(windowMs);
  for (const [at, util, used] of samples) h = appendGpuSample(h, { gpus: [detectedGpu({ utilizationPct: util, vramUsedMb: used, vramTotalMb: 20000 })] }, at);
  return h;
}

/** The path's points as [x, y] pairs. */
const points = (path: string) => [...path.matchAll(/[ML](-?[\d.]+),(-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
const plotW = CHART_W - PLOT.left - PLOT.right;
const plotH = CHART_H - PLOT.top - PLOT.bottom;

describe('gpuChart', () => {
  it('draws steps: each value holds until the next sample, and the last until the end of the window', () => {
    const h = history([
      [0, 0, 0],
      [5 * MIN, 100, 10000],
    ]);
    const { lines } = gpuChart(h, 'utilization', 10 * MIN);
    const bottom = PLOT.top + plotH;
    expect(points(lines[0]!.path)).toEqual([
      [PLOT.left, bottom],
      [PLOT.left + plotW / 2, bottom],
      [PLOT.left + plotW / 2, PLOT.top],
      [PLOT.left + plotW, PLOT.top],
    ]);
    // Memory is drawn as a share of the GPU's total: 10000 of 20000 MB is half way up.
    const mem = points(gpuChart(h, 'memory', 10 * MIN).lines[0]!.path);
    expect(mem[2]![1]).toBeCloseTo(PLOT.top + plotH / 2, 1);
  });

  it('leaves a gap where a value was not reported, and clips samples older than the window to its left edge', () => {
    const h = history(
      [
        [0, 50, null],
        [MIN, null, null],
        [2 * MIN, 50, null],
      ],
      10 * MIN,
    );
    const path = gpuChart(h, 'utilization', 12 * MIN).lines[0]!.path;
    expect(path.match(/M/g)).toHaveLength(2);
    expect(points(path)[0]![0]).toBe(PLOT.left);
    expect(gpuChart(h, 'memory', 12 * MIN).lines[0]!.path).toBe('');
  });

  it('labels the axes: 0/50/100 % and minutes before now', () => {
    const model = gpuChart(history([[0, 1, 1]]), 'utilization', 10 * MIN);
    expect(model.yTicks.map((t) => t.label)).toEqual(['0 %', '50 %', '100 %']);
    expect(model.xTicks.map((t) => t.label)).toEqual(['−10 min', '−8 min', '−6 min', '−4 min', '−2 min', 'now']);
    expect(model.xTicks[0]!.x).toBe(PLOT.left);
    expect(model.xTicks.at(-1)!.x).toBe(PLOT.left + plotW);
  });
});

describe('chartEnd and percentValues', () => {
  it('ends at the newest sample plus the time since it arrived on the page clock, whatever that clock says', () => {
    const h = history([[1_000_000, 1, 1]]);
    expect(chartEnd(h, 5_000_000_000, 5_000_003_000)).toBe(1_003_000);
    expect(chartEnd(emptyGpuHistory(), 0, 0)).toBeNull();
  });

  it('caps memory at 100 % and has no share without a total', () => {
    const h = history([[0, 1, 30000]]);
    expect(percentValues(h.gpus[0]!, 'memory')).toEqual([100]);
    expect(percentValues({ ...h.gpus[0]!, vramTotalMb: null }, 'memory')).toEqual([null]);
  });
});

describe('gpuSummary', () => {
  const h = history([
    [0, 10, 4000],
    [2 * MIN, 95, 12000],
    [4 * MIN, 60, 9000],
  ]);
  it('says now, low, high and the span, for utilisation and memory', () => {
    expect(gpuSummary(h, h.gpus[0]!, 'utilization')).toBe('now 60 %, low 10 %, high 95 % over the last 4 min');
    expect(gpuSummary(h, h.gpus[0]!, 'memory')).toBe('now 9000 MB of 20000 MB (45 %), low 4000 MB, peak 12000 MB over the last 4 min');
  });
  it('says so when the GPU reports nothing', () => {
    const none = history([
      [0, null, null],
      [1000, null, null],
    ]);
    expect(gpuSummary(none, none.gpus[0]!, 'utilization')).toBe('utilisation not reported');
    expect(gpuSummary(none, none.gpus[0]!, 'memory')).toBe('memory use not reported');
  });
});
