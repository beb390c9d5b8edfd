/**
 * The trainer's other numbers (issue 25, "Any metric"): every finite numeric field of a GPU_SHARE_PROGRESS line
 * that is not one of the fields the coordinator reads itself (step, loss, samples/s, comm figures…) is a metric
 * — `lr`, `eval_loss`, `grad_norm` — kept per run and charted without code changes. Bounded so a trainer that
 * prints a thousand fields (or a name a page long) cannot grow a run without limit: at most MAX_RUN_METRICS
 * names per run (the first ones seen), names of at most MAX_METRIC_NAME_CHARS characters. Pure.
 */

/** Most metric names kept per run (and per progress line). */
export const MAX_RUN_METRICS = 16;
/** Longest metric name kept. */
export const MAX_METRIC_NAME_CHARS = 40;

/** The fields the coordinator reads itself (docs/api.md, "Trainer progress lines"): never metrics. */
export const PROGRESS_FIELDS: ReadonlySet<string> = new Set([
  'step', 'total_steps', 'loss', 'samples_per_sec', 'rank', 'world_size', 'shard', 'resumed_from',
  'grad_bytes', 'powersgd_bytes', 'compute_s', 'comm', 'comm_s', 'drift', 'drift_steps',
]);

// Letters, digits and _ . / - (what logging libraries name things: "eval/loss", "lr-group0"), starting with a letter or _.
const NAME = new RegExp(`^[A-Za-z_][A-Za-z0-9_./-]{0,${MAX_METRIC_NAME_CHARS - 1}}$`);

/** Whether `name` may name a metric (not a field the coordinator reads, short, plain characters). */
export function isMetricName(name: string): boolean {
  return NAME.test(name) && !PROGRESS_FIELDS.has(name);
}

/** The metrics of one parsed progress line (its JSON object): null when it has none. */
export function extractMetrics(record: Record<string, unknown>): Record<string, number> | null {
  let metrics: Record<string, number> | null = null;
  let count = 0;
  for (const [name, value] of Object.entries(record)) {
    if (typeof value !== 'number' || !Number.isFinite(value) || !isMetricName(name)) continue;
    (metrics ??= {})[name] = value;
    if (++count >= MAX_RUN_METRICS) break;
  }
  return metrics;
}

/** Whether `value` is what a progress point's `metrics` may be: at most MAX_RUN_METRICS named finite numbers. */
export function isMetricsRecord(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return entries.length <= MAX_RUN_METRICS && entries.every(([k, v]) => isMetricName(k) && typeof v === 'number' && Number.isFinite(v));
}
