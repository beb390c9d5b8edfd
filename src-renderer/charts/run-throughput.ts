/**
 * Samples/s over time for each run, recorded in the page from the run snapshots the core sends as the run goes
 * (the run's total and each member's own figure, at the time of the progress they came with). The core keeps
 * only the latest figure, so the chart covers the time this page has watched the run; bounded per run and in
 * the number of runs kept. Pure recording first, then the store the Runs view reads.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import { useStore } from 'zustand';
import type { RunSnapshot } from '../../src-shared/training';
import type { AppStore } from '../store/apply';
import { startRecorder } from './page-recorder';

/** Points kept per run (at one progress update a second, the last 20 minutes; older points go first). */
export const MAX_THROUGHPUT_POINTS = 1200;
/** Runs whose series the page keeps; the run touched longest ago goes first. */
export const MAX_THROUGHPUT_RUNS = 8;

export interface ThroughputSeries {
  /** When the run started (the core's clock, like `at`), for "time since start". */
  startedAt: number;
  /** Times of the points: each progress update's `at`, ascending. */
  at: number[];
  /** The run's samples/s at each point (null when the trainer said none). */
  total: (number | null)[];
  /** Each member's samples/s at each point, by worker id (null while it was not a member or said none). */
  workers: Record<number, { node: string; values: (number | null)[] }>;
}

export type ThroughputByRun = Record<string, ThroughputSeries>;

function push<T>(list: T[], value: T): T[] {
  const next = [...list, value];
  return next.length > MAX_THROUGHPUT_POINTS ? next.slice(next.length - MAX_THROUGHPUT_POINTS) : next;
}

/** One run's new point, when its progress is newer than the last point recorded; else the series unchanged. */
export function recordRun(series: ThroughputSeries | undefined, run: RunSnapshot): ThroughputSeries | undefined {
  const p = run.progress;
  if (!p || !Number.isFinite(p.at)) return series;
  const prev = series ?? { startedAt: run.startedAt, at: [], total: [], workers: {} };
  const last = prev.at[prev.at.length - 1];
  if (last !== undefined && p.at <= last) return series;
  const length = prev.at.length;
  const workers: ThroughputSeries['workers'] = {};
  const ids = new Set([...Object.keys(prev.workers).map(Number), ...run.workerRows.map((r) => r.workerId)]);
  for (const id of ids) {
    const row = run.workerRows.find((r) => r.workerId === id);
    const had = prev.workers[id] ?? { node: row?.node ?? `worker ${id}`, values: new Array<number | null>(length).fill(null) };
    const value = row && row.member && row.samplesPerSec !== null && Number.isFinite(row.samplesPerSec) ? row.samplesPerSec : null;
    workers[id] = { node: row?.node ?? had.node, values: push(had.values, value) };
  }
  const total = p.samplesPerSec !== null && Number.isFinite(p.samplesPerSec) ? p.samplesPerSec : null;
  return { startedAt: prev.startedAt, at: push(prev.at, p.at), total: push(prev.total, total), workers };
}

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
