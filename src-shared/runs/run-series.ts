/**
 * A run's series over time, as the coordinator keeps them and the page draws them: samples/s (the run's total
 * and each member's) and each member's resources (CPU, RAM, GPUs, from its heartbeats). Kept by the coordinator
 * so a page opened or reloaded late draws the whole run, not only what it watched; bounded by thinning: a
 * series past its cap drops the points in its most crowded stretches (the first and the newest stay), so a
 * long run keeps its whole shape, evenly spread, at a coarser grain. Pure: no node:*.
 */
import type { RunSnapshot } from '../training';
import type { ResourceHistory } from '../resources/worker-resources';
import { thinned, thinningMask } from '../series-thinning';

// Thinning lives in series-thinning.ts (resource histories use it too); the run's series name it here as well.
export { thinned, thinningMask };

/** Points kept per series (samples/s of a run; resource samples of a member in a run). */
export const MAX_SERIES_POINTS = 600;

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

/** What GET /v1/runs/ID/series and the page's getRunSeries answer. */
export interface RunSeries {
  runId: string;
  /** Null before the run's second progress update. */
  throughput: ThroughputSeries | null;
  /** Each worker that was a member while the run was live, by worker id. */
  resources: Record<number, ResourceHistory>;
}

/** A samples/s series with one more point, thinned to the cap. */
function appendPoint(prev: ThroughputSeries, at: number, total: number | null, workers: ThroughputSeries['workers'], cap: number): ThroughputSeries {
  const times = [...prev.at, at];
  const mask = thinningMask(times, cap);
  const kept: ThroughputSeries['workers'] = {};
  for (const [id, w] of Object.entries(workers)) kept[Number(id)] = { node: w.node, values: thinned(w.values, mask) };
  return { startedAt: prev.startedAt, at: thinned(times, mask), total: thinned([...prev.total, total], mask), workers: kept };
}

/** One run's new samples/s point, when its progress is newer than the last point recorded; else the series unchanged. */
export function recordRun(series: ThroughputSeries | undefined, run: RunSnapshot, cap = MAX_SERIES_POINTS): ThroughputSeries | undefined {
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
    workers[id] = { node: row?.node ?? had.node, values: [...had.values, value] };
  }
  const total = p.samplesPerSec !== null && Number.isFinite(p.samplesPerSec) ? p.samplesPerSec : null;
  return appendPoint(prev, p.at, total, workers, cap);
}

/**
 * A page's series and the coordinator's for one run, as one: the coordinator's (the whole run) with the
 * page's points newer than its last appended. Where the page has none, the coordinator's alone.
 */
export function mergeThroughput(page: ThroughputSeries | undefined, kept: ThroughputSeries, cap = MAX_SERIES_POINTS): ThroughputSeries {
  if (!page) return kept;
  const last = kept.at[kept.at.length - 1] ?? -Infinity;
  let out = kept;
  page.at.forEach((at, i) => {
    if (at <= last) return;
    const workers: ThroughputSeries['workers'] = {};
    const ids = new Set([...Object.keys(out.workers), ...Object.keys(page.workers)].map(Number));
    for (const id of ids) {
      const had = out.workers[id] ?? { node: page.workers[id]!.node, values: new Array<number | null>(out.at.length).fill(null) };
      workers[id] = { node: had.node, values: [...had.values, page.workers[id]?.values[i] ?? null] };
    }
    out = appendPoint(out, at, page.total[i] ?? null, workers, cap);
  });
  return out;
}
