/**
 * A job's final metrics for the sweep comparison (Jobs view, `jobs show`): the `metrics.json` a trainer may put at
 * the top of its artifact, e.g. {"eval_loss": 1.92, "accuracy": 0.61}. Read as untrusted data: at most
 * MAX_METRICS_BYTES of text, a JSON object whose finite numbers are kept (at most MAX_METRICS keys, names of at
 * most MAX_METRIC_NAME characters); anything else in it is left out, and text that is not such an object is none.
 */

export type JobMetrics = Record<string, number>;

export const METRICS_FILE = 'metrics.json';
export const MAX_METRICS_BYTES = 64 * 1024;
export const MAX_METRICS = 24;
export const MAX_METRIC_NAME = 64;

export function parseMetricsJson(text: string): JobMetrics | null {
  if (text.length > MAX_METRICS_BYTES) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const metrics: JobMetrics = {};
  let kept = 0;
  for (const [name, v] of Object.entries(value)) {
    if (kept >= MAX_METRICS) break;
    if (typeof v !== 'number' || !Number.isFinite(v) || name.length === 0 || name.length > MAX_METRIC_NAME || name === '__proto__') continue;
    metrics[name] = v;
    kept += 1;
  }
  return kept > 0 ? metrics : null;
}

/** The metric names of these jobs, in first-seen order, for the comparison's columns (at most `max`). */
export function metricNames(all: readonly (JobMetrics | null | undefined)[], max = 6): string[] {
  const names: string[] = [];
  for (const m of all) {
    for (const name of Object.keys(m ?? {})) {
      if (names.length >= max) return names;
      if (!names.includes(name)) names.push(name);
    }
  }
  return names;
}
