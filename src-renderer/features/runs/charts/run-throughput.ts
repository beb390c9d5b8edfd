/**
 * Samples/s over time for each run, recorded in the page from the run snapshots the core sends as the run goes
 * (the run's total and each member's own figure, at the time of the progress they came with), and seeded from
 * the series the coordinator kept (run-series-seed.ts) so a page opened late draws the whole run; bounded per
 * run and in the number of runs kept. Pure recording first, then the store the Runs view reads.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import { useStore } from 'zustand';
import type { RunSnapshot } from '../../../../src-shared/training';
import { MAX_SERIES_POINTS, mergeThroughput, recordRun, type ThroughputSeries } from '../../../../src-shared/runs/run-series';
import type { AppStore } from '../../../store/apply';
import { startRecorder } from '../../../charts/page-recorder';

/** Points kept per run (past it the series is thinned: every other point, the whole run's shape kept). */
export const MAX_THROUGHPUT_POINTS = MAX_SERIES_POINTS;
/** Runs whose series the page keeps; the run touched longest ago goes first. */
export const MAX_THROUGHPUT_RUNS = 8;

export type { ThroughputSeries };
export { recordRun };

export type ThroughputByRun = Record<string, ThroughputSeries>;

/** Every live run's new point; the oldest-touched runs beyond MAX_THROUGHPUT_RUNS are dropped. */
export function recordRuns(byRun: ThroughputByRun, runs: readonly RunSnapshot[]): ThroughputByRun {
  let next = byRun;
  for (const run of runs) {
    const before = byRun[run.id];
    const after = recordRun(before, run);
    if (after !== before && after) {
      // Re-inserted last: the object's key order is the order the runs were touched in.
      const { [run.id]: _old, ...rest } = next;
      next = { ...rest, [run.id]: after };
    }
  }
  const ids = Object.keys(next);
  if (ids.length > MAX_THROUGHPUT_RUNS) {
    const keep = new Set(ids.slice(ids.length - MAX_THROUGHPUT_RUNS));
    next = Object.fromEntries(Object.entries(next).filter(([id]) => keep.has(id)));
  }
  return next;
}

export const throughputStore: StoreApi<ThroughputByRun> = createStore<ThroughputByRun>()(() => ({}));

export function useThroughput(runId: string): ThroughputSeries | undefined {
  return useStore(throughputStore, (s) => s[runId]);
}

/** Records every run update the page receives from now on; returns the function that stops it. */
export function startThroughputRecorder(app: AppStore, store: StoreApi<ThroughputByRun> = throughputStore): () => void {
  return startRecorder(app, store, (s) => s.runs.list, recordRuns);
}

/** The coordinator's series for a run, merged under what the page recorded since (a reload starts with both). */
export function seedThroughput(store: StoreApi<ThroughputByRun>, runId: string, kept: ThroughputSeries): void {
  store.setState((s) => ({ ...s, [runId]: mergeThroughput(s[runId], kept) }), true);
}
