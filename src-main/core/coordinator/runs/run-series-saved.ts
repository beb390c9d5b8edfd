/**
 * A run's series as the state database gives them back at start (run-series-book.ts saves them): checked before
 * the coordinator keeps them, since the file may be old, hand-edited or damaged. A row that is not a series is
 * refused with the reason (the run's charts then start empty; the start goes on); a series longer than the caps
 * (the book never saves one) is cut to them by an even stride, in one pass, so a saved row can neither make the
 * coordinator keep more than it would nor make its start slow.
 */
import { z } from 'zod';
import { MAX_RESOURCE_SAMPLES, MAX_RESOURCE_WORKERS, workerResourcesSchema, type ResourceHistory } from '../../../../src-shared/resources/worker-resources';
import { MAX_SERIES_POINTS, thinned, type RunSeries, type ThroughputSeries } from '../../../../src-shared/runs/run-series';

/** Longest array a saved series may hold before it is refused outright (thinning a longer one would cost too much). */
const MAX_SAVED_LENGTH = 4 * MAX_SERIES_POINTS;
const time = z.number();
const value = z.number().nullable();
const node = z.string().min(1).max(200);
const workerId = z.string().regex(/^\d{1,9}$/, 'a worker id');

const throughputSchema = z
  .object({
    startedAt: time,
    at: z.array(time).max(MAX_SAVED_LENGTH),
    total: z.array(value).max(MAX_SAVED_LENGTH),
    workers: z.record(workerId, z.object({ node, values: z.array(value).max(MAX_SAVED_LENGTH) })),
  })
  .refine((t) => t.total.length === t.at.length && Object.values(t.workers).every((w) => w.values.length === t.at.length), 'its samples/s columns differ in length from its times')
  .refine((t) => t.at.every((at, i) => i === 0 || at > t.at[i - 1]!), 'its times do not ascend')
  .refine((t) => Object.keys(t.workers).length <= MAX_RESOURCE_WORKERS, `more than ${MAX_RESOURCE_WORKERS} workers`);

const historySchema = z
  .object({ node, samples: z.array(workerResourcesSchema.extend({ at: time })).max(MAX_SAVED_LENGTH) })
  .refine((h) => h.samples.every((s, i) => i === 0 || s.at > h.samples[i - 1]!.at), 'its resource samples do not ascend in time');

const savedSeriesSchema = z.object({
  runId: z.string().min(1).max(200),
  throughput: throughputSchema.nullable(),
  resources: z.record(workerId, historySchema).refine((r) => Object.keys(r).length <= MAX_RESOURCE_WORKERS, `more than ${MAX_RESOURCE_WORKERS} workers`),
});

/** Which of `length` points to keep so that at most `cap` stay, evenly strided, the first and the last kept; null: all. */
function strideMask(length: number, cap: number): boolean[] | null {
  if (length <= cap) return null;
  const keep = new Array<boolean>(length).fill(false);
  for (let i = 0; i < cap; i++) keep[Math.round((i * (length - 1)) / (cap - 1))] = true;
  return keep;
}

/** Cut to the caps a live series keeps (the first and the newest points stay). */
function capped(series: RunSeries): RunSeries {
  let throughput: ThroughputSeries | null = series.throughput;
  if (throughput && throughput.at.length > MAX_SERIES_POINTS) {
    const mask = strideMask(throughput.at.length, MAX_SERIES_POINTS);
    const workers: ThroughputSeries['workers'] = {};
    for (const [id, w] of Object.entries(throughput.workers)) workers[Number(id)] = { node: w.node, values: thinned(w.values, mask) };
    throughput = { startedAt: throughput.startedAt, at: thinned(throughput.at, mask), total: thinned(throughput.total, mask), workers };
  }
  const resources: Record<number, ResourceHistory> = {};
  for (const [id, h] of Object.entries(series.resources)) {
    const mask = strideMask(h.samples.length, MAX_RESOURCE_SAMPLES);
    resources[Number(id)] = { node: h.node, samples: thinned(h.samples, mask) };
  }
  return { runId: series.runId, throughput, resources };
}

/**
 * A saved row as a run's series, or why it is not one. `saved` is the parsed JSON (an Error when the row was
 * not JSON at all); `runId` is the run the row is kept under, which the series must name.
 */
export function parseSavedSeries(runId: string, saved: unknown): { ok: true; series: RunSeries } | { ok: false; reason: string } {
  if (saved instanceof Error) return { ok: false, reason: `not JSON: ${saved.message}` };
  const parsed = savedSeriesSchema.safeParse(saved);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, reason: `${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}` };
  }
  if (parsed.data.runId !== runId) return { ok: false, reason: `it names run "${parsed.data.runId}"` };
  return { ok: true, series: capped(parsed.data as RunSeries) };
}
