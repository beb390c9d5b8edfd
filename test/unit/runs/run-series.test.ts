// A run's series stay bounded however long the run: thinned to the cap, the first and newest points kept and
// the whole run's shape kept, evenly spread (not only its last minutes, as the page's sliding window kept).
import { describe, expect, it } from 'vitest';
import { MAX_SERIES_POINTS, thinned, thinningMask, mergeThroughput, recordRun, type ThroughputSeries } from '../../../src-shared/runs/run-series';
import { appendResources, mergeResources, MAX_RESOURCE_SAMPLES, type ResourceHistory } from '../../../src-shared/resources/worker-resources';
import type { RunSnapshot } from '../../../src-shared/training';

const run = (at: number, samplesPerSec: number): RunSnapshot =>
  ({
    id: 'run-1',
    startedAt: 0,
    progress: { step: at, totalSteps: null, loss: 1, samplesPerSec, resumedFrom: null, at },
    workerRows: [{ workerId: 1, node: 'alpha', member: true, step: at, loss: 1, samplesPerSec, restartsCaused: 0, end: null }],
  }) as unknown as RunSnapshot;

describe('run series bound', () => {
  it('a run of 100,000 samples/s points keeps at most the cap, spread over the whole run, its shape kept', () => {
    // 300 samples/s for the first half of the run, 100 for the second.
    let s: ThroughputSeries | undefined;
    const n = 100_000;
    for (let t = 1; t <= n; t++) s = recordRun(s, run(t, t <= n / 2 ? 300 : 100));
    expect(s!.at.length).toBeLessThanOrEqual(MAX_SERIES_POINTS);
    expect(s!.at.length).toBeGreaterThan(MAX_SERIES_POINTS * 0.8);
    expect(s!.total).toHaveLength(s!.at.length);
    expect(s!.workers[1]!.values).toHaveLength(s!.at.length);
    expect(s!.at[0]).toBe(1); // the run's start is still drawn
    expect(s!.at.at(-1)).toBe(n);
    expect([...s!.at].sort((a, b) => a - b)).toEqual(s!.at);
    // The level change sits in the middle: every point before it says 300, every one after 100.
    s!.at.forEach((t, i) => expect(s!.total[i]).toBe(t <= n / 2 ? 300 : 100));
    const early = s!.at.filter((t) => t <= n / 2).length;
    // Evenly spread: about half the points in each half, no gap far wider than the run's length over the cap.
    expect(early / s!.at.length).toBeGreaterThan(0.4);
    expect(early / s!.at.length).toBeLessThan(0.6);
    const gaps = s!.at.slice(1).map((t, i) => t - s!.at[i]!);
    expect(Math.max(...gaps)).toBeLessThan((4 * n) / MAX_SERIES_POINTS);
  }, 30_000);

  it("a worker's resources over 100,000 heartbeats keep at most the cap, from the first to the newest", () => {
    let h: ResourceHistory | undefined;
    for (let t = 1; t <= 100_000; t++) h = appendResources(h, 'alpha', { at: t, cpuPct: t <= 50_000 ? 90 : 10, ramUsedMb: 1, ramTotalMb: 2, gpus: [] });
    expect(h!.samples.length).toBeLessThanOrEqual(MAX_RESOURCE_SAMPLES);
    expect(h!.samples[0]!.at).toBe(1);
    expect(h!.samples.at(-1)!.at).toBe(100_000);
    expect(h!.samples.some((s) => s.cpuPct === 90) && h!.samples.some((s) => s.cpuPct === 10)).toBe(true);
  }, 30_000);

  it('drops the inner points in the most crowded stretches, never the first or the newest', () => {
    expect(thinningMask([0, 1, 2], 3)).toBeNull();
    expect(thinningMask([0, 10, 11, 12, 30], 4)).toEqual([true, true, false, true, true]);
    let at: number[] = [];
    for (let t = 0; t < 5000; t++) {
      at = [...at, t];
      at = thinned(at, thinningMask(at, 16));
      expect(at.length).toBeLessThanOrEqual(16);
    }
    expect(at[0]).toBe(0);
    expect(at.at(-1)).toBe(4999);
    expect(at.length).toBeGreaterThanOrEqual(14);
  });

  it("merges the coordinator's series under what a page recorded since, and a page's history of the worker around a run's", () => {
    let kept: ThroughputSeries | undefined;
    for (let t = 1; t <= 5; t++) kept = recordRun(kept, run(t, 10 * t));
    let page: ThroughputSeries | undefined;
    for (const t of [4, 5, 6, 7]) page = recordRun(page, run(t, 10 * t));
    const merged = mergeThroughput(page, kept!);
    expect(merged.at).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(merged.total).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(merged.workers[1]!.values).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(mergeThroughput(undefined, kept!)).toBe(kept);

    const sample = (at: number) => ({ at, cpuPct: at, ramUsedMb: 1, ramTotalMb: 2, gpus: [] });
    const pageHistory = { node: 'alpha', samples: [1, 2, 9, 10].map(sample) };
    const keptHistory = { node: 'alpha', samples: [3, 4, 5].map(sample) };
    expect(mergeResources(pageHistory, keptHistory).samples.map((s) => s.at)).toEqual([1, 2, 3, 4, 5, 9, 10]);
    expect(mergeResources(undefined, keptHistory).samples.map((s) => s.at)).toEqual([3, 4, 5]);
  });
});
