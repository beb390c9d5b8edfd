/**
 * The Prometheus text exposition format, version 0.0.4: metric families in, text out. Pure; what the families
 * mean lives in the files that build them.
 *
 * Label values come from other machines (node names) and from people (run names), so they are escaped as the
 * format requires (`\` → `\\`, `"` → `\"`, line feed → `\n`); HELP text escapes `\` and line feed. Metric and
 * label names are ours and checked: a bad one is a bug here, so it throws rather than emit a page no scraper
 * reads. A label set that repeats within a family is written once (Prometheus rejects a scrape with duplicates).
 */

export type MetricType = 'counter' | 'gauge';

export type Labels = Readonly<Record<string, string | number | boolean>>;

export interface Sample {
  labels: Labels;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

const NEEDS_ESCAPE = /[\\"\n]/;

export function escapeLabelValue(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** Go's ParseFloat spellings for the values JavaScript prints differently. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** Label names already checked; there are a dozen, so checking each once keeps a scrape cheap. */
const checkedLabelNames = new Set<string>();

function formatLabels(labels: Labels): string {
  let out = '';
  for (const name in labels) {
    if (!checkedLabelNames.has(name)) {
      if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new Error(`metrics: "${name}" is not a usable label name`);
      checkedLabelNames.add(name);
    }
    out += `${out ? ',' : '{'}${name}="${escapeLabelValue(String(labels[name]))}"`;
  }
  return out ? `${out}}` : '';
}

export function renderFamily(family: MetricFamily): string {
  if (!METRIC_NAME.test(family.name)) throw new Error(`metrics: "${family.name}" is not a valid metric name`);
  if (family.type === 'counter' && !family.name.endsWith('_total')) throw new Error(`metrics: counter ${family.name} must end in _total`);
  const lines = [`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`];
  const seen = new Set<string>();
  for (const sample of family.samples) {
    const labels = formatLabels(sample.labels);
    if (seen.has(labels)) continue;
    seen.add(labels);
    lines.push(`${family.name}${labels} ${formatValue(sample.value)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The whole page: every family once, in the order given. */
export function renderFamilies(families: readonly MetricFamily[]): string {
  const names = new Set<string>();
  for (const family of families) {
    if (names.has(family.name)) throw new Error(`metrics: family ${family.name} appears twice`);
    names.add(family.name);
  }
  return families.map(renderFamily).join('');
}

/** A gauge or counter family from (labels, value) pairs, skipping values that are null (not reported). */
export function family(name: string, type: MetricType, help: string, samples: readonly (readonly [Labels, number | null])[]): MetricFamily {
  return {
    name,
    type,
    help,
    samples: samples.filter((s): s is readonly [Labels, number] => s[1] !== null).map(([labels, value]) => ({ labels, value })),
  };
}
