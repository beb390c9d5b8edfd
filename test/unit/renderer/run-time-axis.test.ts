// Issue 25 item 9: the charts of a run's page share one time axis (the run's start to its end, or now), and a
// worker whose part ended early gets a mark on its chart where it failed or left.
import { describe, expect, it } from 'vitest';
import type { RunWorkerRow } from '../../../src-shared/training';
import { runTimeRange, workerEndMark } from '../../../src-renderer/features/runs/charts/run-time-axis';
import { xyChart } from '../../../src-renderer/charts/xy-chart-model';
import { runSnapshot } from '../helpers/snapshots';

const START = 1_000_000;
const row = (over: Partial<RunWorkerRow>): RunWorkerRow => ({ workerId: 1, node: 'gamma', member: false, step: 85, loss: null, samplesPerSec: null, restartsCaused: 0, end: null, ...over });

describe("a run's time axis", () => {
  it("spans the run's start to its end, or to now while it runs", () => {
    expect(runTimeRange(runSnapshot({ startedAt: START, endedAt: START + 90_000 }), START + 500_000)).toEqual([0, 90]);
    expect(runTimeRange(runSnapshot({ startedAt: START, endedAt: null }), START + 42_000)).toEqual([0, 42]);
  });

  it('a chart given the span draws all of it, though its own samples cover less', () => {
    const series = [{ key: 'cpu', label: 'CPU', color: 'red', xs: [12, 30, 41], ys: [10, 20, 30] }];
    const model = xyChart({ series, xRange: [0, 90] })!;
    expect([model.x.min, model.x.max]).toEqual([0, 90]);
    expect([xyChart({ series })!.x.min, xyChart({ series })!.x.max]).toEqual([12, 41]);
  });

  it('marks a failed part at its time with its step, a left part with why; none for a part that ended with the run', () => {
    const run = runSnapshot({ startedAt: START, endedAt: START + 90_000 });
    expect(workerEndMark(run, row({ end: 'failed', endedAt: START + 30_000 }), START + 28_000)).toEqual({ x: 30, label: 'failed', title: 'gamma failed here at step 86', kind: 'failed' });
    expect(workerEndMark(run, row({ end: 'left', endedAt: START + 45_000 }), null)).toMatchObject({ x: 45, label: 'left', kind: 'left' });
    // A run saved before rows kept the time: at its last sample.
    expect(workerEndMark(run, row({ end: 'failed', step: null }), START + 28_000)).toMatchObject({ x: 28, title: 'gamma failed here' });
    expect(workerEndMark(run, row({ end: 'finished' }), START + 89_000)).toBeNull();
    expect(workerEndMark(run, undefined, START)).toBeNull();
  });
});
