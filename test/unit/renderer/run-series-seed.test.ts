// A run page opened late or reloaded seeds its samples/s and resources charts from what the coordinator kept
// (getRunSeries), under what the page recorded since; an answer that fails leaves the live recording alone.
import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { loadRunSeries } from '../../../src-renderer/features/runs/charts/run-series-seed';
import type { ThroughputByRun } from '../../../src-renderer/features/runs/charts/run-throughput';
import type { ResourcesByWorker } from '../../../src-renderer/features/runs/charts/resource-history';
import type { RunSeries } from '../../../src-shared/runs/run-series';

const sample = (at: number) => ({ at, cpuPct: 40, ramUsedMb: 1, ramTotalMb: 2, gpus: [] });

function stores() {
  return { throughput: createStore<ThroughputByRun>()(() => ({})), resources: createStore<ResourcesByWorker>()(() => ({})) };
}

describe('loadRunSeries', () => {
  it("seeds the page's charts with the run so far, the page's newer points after them", async () => {
    const s = stores();
    // What the page recorded since it reloaded: one point, and one heartbeat sample of worker 3.
    s.throughput.setState({ 'run-1': { startedAt: 0, at: [40], total: [7], workers: {} } }, true);
    s.resources.setState({ 3: { node: 'alpha', samples: [sample(40)] } }, true);
    const kept: RunSeries = {
      runId: 'run-1',
      throughput: { startedAt: 0, at: [10, 20, 30], total: [4, 5, 6], workers: { 3: { node: 'alpha', values: [4, 5, 6] } } },
      resources: { 3: { node: 'alpha', samples: [10, 20, 30].map(sample) } },
    };
    const asked: string[] = [];
    await loadRunSeries({ getRunSeries: async ({ runId }) => (asked.push(runId), kept) }, 'run-1', s);
    expect(asked).toEqual(['run-1']);
    expect(s.throughput.getState()['run-1']).toEqual({ startedAt: 0, at: [10, 20, 30, 40], total: [4, 5, 6, 7], workers: { 3: { node: 'alpha', values: [4, 5, 6, null] } } });
    expect(s.resources.getState()[3]!.samples.map((x) => x.at)).toEqual([10, 20, 30, 40]);
  });

  it('leaves the stores as they are when the core cannot answer', async () => {
    const s = stores();
    s.throughput.setState({ 'run-1': { startedAt: 0, at: [40], total: [7], workers: {} } }, true);
    await loadRunSeries({ getRunSeries: () => Promise.reject(new Error('no such channel')) }, 'run-1', s);
    expect(s.throughput.getState()['run-1']!.at).toEqual([40]);
    expect(s.resources.getState()).toEqual({});
  });
});
