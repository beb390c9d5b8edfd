/**
 * How long parse + validate of cluster.yaml takes in-process: a 500-node cluster with mixed GPUs (target
 * < 100 ms), split into the yaml package's share and ours, and a set of hostile inputs of about 1 MiB each
 * (target: a clear error within 100 ms). Every hostile case must come back as an error; the bench stops
 * with exit 1 if one does not.
 *
 * Run: node scripts/run-ts.mjs bench/validate-500.ts [--runs N]
 */
import { cpus, loadavg } from 'node:os';
import {
  MAX_CLUSTER_YAML_BYTES,
  parseClusterYaml,
  serializeClusterYaml,
  type ClusterConfig,
} from '../src-shared/cluster/index';
import { readYamlDocument } from '../src-shared/cluster/read-yaml';
import { garbage } from '../test/fixtures/cluster/garbage';
import { intFlag } from './lib/flags';
import { mixedNode } from './lib/mixed-cluster';
import { summarize } from './lib/stats';

const TARGET_MS = 100;
const RUNS = intFlag('runs', 50, 1, 500);
/** Slow hostile cases stop after this much measuring time (at least 5 runs). */
const CASE_BUDGET_MS = 5_000;

const node = mixedNode;

function time(fn: () => void, runs: number, budgetMs = Infinity): number[] {
  const samples: number[] = [];
  const started = performance.now();
  for (let i = 0; i < runs && (i < 5 || performance.now() - started < budgetMs); i++) {
    const t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  return samples;
}

function line(label: string, samples: number[], withTarget = true): string {
  const s = summarize(samples);
  const verdict = withTarget ? ` — target < ${TARGET_MS} ms: ${s.p50 < TARGET_MS ? 'met' : 'MISSED'}` : '';
  return `  ${label.padEnd(44)} median ${s.p50.toFixed(1).padStart(7)} ms  p95 ${s.p95.toFixed(1).padStart(7)} ms  (n=${s.n})${verdict}`;
}

function fill(unit: string, prefix = '', suffix = ''): string {
  const room = MAX_CLUSTER_YAML_BYTES - prefix.length - suffix.length;
  return prefix + unit.repeat(Math.floor(room / unit.length)) + suffix;
}

/** `k0: 1`, `k1: 1`, … up to 1 MiB: the yaml package's own duplicate-key check is quadratic in this. */
function distinctKeys(): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < MAX_CLUSTER_YAML_BYTES - 20; i++) {
    const l = `k${i.toString(36)}: 1\n`;
    lines.push(l);
    size += l.length;
  }
  return lines.join('');
}

const load = () => loadavg()[0]!.toFixed(1);
console.log(
  `validate benchmark — node ${process.version}, ${process.platform}/${process.arch}, ${cpus()[0]?.model ?? 'unknown CPU'} ×${cpus().length}, load ${load()}`,
);

// --- 500 nodes ---------------------------------------------------------------------------------------------
const config: ClusterConfig = { nodes: Array.from({ length: 500 }, (_, i) => node(i)) };
const text = serializeClusterYaml(config);
const check = parseClusterYaml(text);
if (!check.ok) throw new Error(`the generated cluster does not validate: ${check.errors[0]?.message}`);
const gpuCount = config.nodes.reduce((n, x) => n + x.gpus.length, 0);
console.log(`\n500-node cluster.yaml: ${text.length} bytes, ${text.split('\n').length} lines, ${gpuCount} GPUs; warm-up 10, then ${RUNS} runs`);
for (let i = 0; i < 10; i++) parseClusterYaml(text);
const full = time(() => parseClusterYaml(text), RUNS);
const yamlOnly = time(() => readYamlDocument(text), RUNS);
const serialize = time(() => serializeClusterYaml(config), RUNS);
console.log(line('parse + validate (parseClusterYaml)', full));
console.log(line('  of which the yaml package (readYamlDocument)', yamlOnly, false));
console.log(line('serializeClusterYaml', serialize, false));

// --- hostile, about 1 MiB each ------------------------------------------------------------------------------
let bomb = 'gpu: &g {uuid: GPU-1, type: rtx-4090, vram_mb: 24564}\n';
bomb += `many: &many [${Array(2000).fill('*g').join(', ')}]\n`;
bomb += 'node: &n {name: box, host: localhost, gpus: *many}\n';
bomb += `nodes: [${Array(2000).fill('*n').join(', ')}]\n`; // 2000 nodes × 2000 GPUs = 4 million GPUs if expanded

const hostile: [string, string][] = [
  ['1 MiB + 1 byte', 'x'.repeat(MAX_CLUSTER_YAML_BYTES + 1)],
  ['1 MiB of "[" (deep flow nesting)', fill('[')],
  ['1 MiB of "- " (deep block nesting)', fill('- ')],
  ['1 MiB of random bytes (decoded as UTF-8)', garbage(MAX_CLUSTER_YAML_BYTES, 7)],
  ['1 MiB of UTF-16 text (NUL bytes)', fill('n\0')],
  ['alias bomb: 2000 nodes × 2000 GPUs via aliases', bomb],
  ['1 MiB of distinct top-level keys', distinctKeys()],
  ['1 MiB of one-char flow items (token limit)', fill('a,', 'nodes: [', ']')],
  ['1 MiB of "- a" nodes (100-error cap)', fill('  - a\n', 'nodes:\n')],
  ['1 MiB string as nodes', fill('x', 'nodes: "', '"')],
  ['__proto__ pollution attempt ×5000', `nodes:\n  - name: a\n    host: h\n${'    __proto__: {polluted: 1}\n'.repeat(5000)}`],
];

console.log(`\nhostile inputs (warm-up 3, then up to ${RUNS} runs or ${CASE_BUDGET_MS / 1000} s each):`);
let failed = false;
for (const [label, input] of hostile) {
  for (let i = 0; i < 3; i++) parseClusterYaml(input);
  const result = parseClusterYaml(input);
  if (result.ok) {
    console.log(`  ${label}: NOT REJECTED`);
    failed = true;
    continue;
  }
  const samples = time(() => parseClusterYaml(input), RUNS, CASE_BUDGET_MS);
  const first = result.errors[0]!;
  const at = first.line !== undefined ? `${first.line}:${first.col}` : '-';
  console.log(line(`${label} (${(input.length / 1024).toFixed(0)} KiB)`, samples));
  console.log(`      → ${at} ${first.message.length > 110 ? `${first.message.slice(0, 110)}…` : first.message}`);
}
if (({} as Record<string, unknown>).polluted !== undefined) {
  console.log('Object.prototype was polluted');
  failed = true;
}
console.log(`\nload average at the end: ${load()} (figures from a busy machine are inflated)`);
process.exitCode = failed ? 1 : 0;
