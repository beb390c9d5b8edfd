/**
 * How long placing a sweep takes: 1,000 pending jobs over 100 nodes with mixed GPUs (target < 50 ms for
 * nodeCapacities + placeJobs, median and p99 of the runs). The cluster has 340 slots, so most jobs stay pending
 * and each of those gets a preview with all 100 nodes' reasons: the worst case for the reason texts.
 * Also times buildLedger for the same cluster with the placed jobs held.
 *
 * Run: node scripts/run-ts.mjs bench/placement.ts [--runs N]
 */
import { cpus, loadavg } from 'node:os';
import type { ClusterConfig, NodeConfig } from '../src-shared/cluster/types';
import type { JobSpec } from '../src-shared/jobs/types';
import { buildLedger, jobVramDemandMb, nodeCapacities, placeJobs, type Holding, type PendingJob, type WorkerFacts } from '../src-shared/scheduling/index';
import { intFlag } from './lib/flags';
import { mixedNode } from './lib/mixed-cluster';
import { percentile } from './lib/stats';

const TARGET_MS = 50;
const RUNS = intFlag('runs', 20, 1, 1000);
const NODES = 100;
const JOBS = 1000;

function worker(n: NodeConfig, i: number): WorkerFacts {
  return {
    workerId: i + 1,
    node: n.name,
    state: i % 17 === 16 ? 'draining' : 'active',
    gpus: n.gpus.map((g) => ({ uuid: g.uuid, name: g.type, vramTotalMb: g.vram_mb, memoryType: g.memory_type })),
    cpuCores: 32,
    ramMb: 131072,
    gpuFreeMb: new Map(n.gpus.map((g, k) => [k, Math.floor(g.vram_mb * 0.9)])),
  };
}

/** A sweep of every kind: GPU-only of 2–16 GiB, prefer_cuda, CPU, tiny ones the PCIe rule keeps off GPUs, some pinned. */
function job(i: number): PendingJob {
  const spec: JobSpec = {
    name: `sweep-${i}`,
    command: ['train_lora.py'],
    model: i % 3 === 0 ? 'tiny-gpt' : 'small-gpt',
    mode: 'lora',
    hyper: { rank: 4 << i % 4, lr: 1e-4 * (1 + (i % 5)) },
    seed: i,
    requireCuda: i % 4 === 0,
    preferCuda: i % 4 === 1 || i % 4 === 2,
    minVramGib: 2 + (i % 8) * 2,
    minRamGib: i % 7,
    minCores: i % 5,
    allowedHosts: i % 10 === 0 ? [`node-${i % NODES}`] : null,
    maxAttempts: 3,
    dataMb: i % 4 === 2 ? 100 : null,
    mflops: i % 4 === 2 ? 1e5 : null,
  };
  return { id: `job-${i}`, spec, vramMb: jobVramDemandMb(spec, i % 6 === 0 ? 3000 + i : null).mb };
}

const config: ClusterConfig = { nodes: Array.from({ length: NODES }, (_, i) => mixedNode(i)) };
const workers = config.nodes.map(worker);
const pending = Array.from({ length: JOBS }, (_, i) => job(i));
const runs: Holding[] = config.nodes.slice(0, 10).map((n) => ({ node: n.name, kind: 'run', id: 'run-1', name: 'ddp', gpuIndex: null, vramMb: 0 }));

function once() {
  const nodes = nodeCapacities(config, workers, []);
  return { nodes, ...placeJobs(pending, nodes, runs) };
}

function timed(fn: () => void): number[] {
  for (let i = 0; i < 3; i++) fn(); // warm-up: JIT
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  return samples.sort((a, b) => a - b);
}

const load = () => loadavg()[0]!.toFixed(1);
console.log(`placement benchmark — node ${process.version}, ${process.platform}/${process.arch}, ${cpus()[0]?.model ?? 'unknown CPU'} ×${cpus().length}, load ${load()}`);
const sample = once();
const slots = sample.nodes.reduce((s, n) => s + n.slots, 0);
const gpus = sample.nodes.reduce((s, n) => s + n.gpus.length, 0);
const onGpu = sample.placements.filter((p) => p.gpuIndex !== null).length;
console.log(`${JOBS} jobs over ${NODES} nodes (${gpus} GPUs, ${slots} slots, ${runs.length} held by an elastic run): ${sample.placements.length} placed (${onGpu} on a GPU), ${sample.previews.length} previews × ${NODES} reasons`);

const place = timed(() => once());
const held: Holding[] = [...runs, ...sample.placements.map((p) => ({ node: p.node, kind: 'job' as const, id: p.jobId, name: p.jobId, gpuIndex: p.gpuIndex, vramMb: p.vramMb }))];
const ledger = timed(() => buildLedger(sample.nodes, held));
const line = (label: string, s: number[], target: boolean) =>
  `  ${label.padEnd(34)} median ${percentile(s, 50).toFixed(2).padStart(7)} ms  p99 ${percentile(s, 99).toFixed(2).padStart(7)} ms  (n=${s.length})${target ? ` — target < ${TARGET_MS} ms: ${percentile(s, 50) < TARGET_MS ? 'met' : 'MISSED'}` : ''}`;
console.log(line('nodeCapacities + placeJobs', place, true));
console.log(line('buildLedger', ledger, false));
console.log(`load average at the end: ${load()} (figures from a busy machine are inflated)`);
process.exitCode = percentile(place, 50) < TARGET_MS ? 0 : 1;
