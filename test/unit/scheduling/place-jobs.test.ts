/** Placement: every reason text, binpack and spread, prefer_cuda's fallback, the 5× PCIe rule, free-memory caps. */
import { describe, expect, it } from 'vitest';
import { nodeCapacities, type NodeCapacity } from '../../../src-shared/scheduling/capacity';
import type { Holding } from '../../../src-shared/scheduling/holdings';
import { placeJobs, type PendingJob, type PlaceOptions } from '../../../src-shared/scheduling/place-jobs';
import { declared, gpuConfig, job, matchingCluster, worker, workerGpu } from './builders';

const desk = declared('desk', [gpuConfig('GPU-d', 24564)], 3); // 20879 MB usable
const rig = declared('rig', [gpuConfig('GPU-r0', 24576), gpuConfig('GPU-r1', 24576)], 4); // 20889 each
const jetson = declared('jetson', [gpuConfig('GPU-j', 8192, 'unified')], 1); // 4915
const cpu = declared('cpu', [], 2, { cpu_cores: 16, ram_mb: 65536 });
const cluster = () => matchingCluster([desk, rig, jetson, cpu]);

/** Every node's reason for one job, as things stand. */
function reasons(j: PendingJob, nodes: NodeCapacity[], holdings: Holding[] = [], opts: PlaceOptions = {}): string[] {
  const { previews } = placeJobs([j], nodes, holdings, { ...opts, previewPlaced: true });
  return previews[0]!.verdicts.map((v) => `${v.ok ? 'ok' : 'no'} ${v.reason}`);
}

const where = (r: ReturnType<typeof placeJobs>) => r.placements.map((p) => `${p.node}:${p.gpuIndex ?? 'cpu'}`);
const hold = (node: string, id: string, extra: Partial<Holding> = {}): Holding => ({ node, kind: 'job', id, name: id, gpuIndex: null, vramMb: 0, ...extra });

describe('placeJobs reasons', () => {
  it('VRAM, CUDA and the ok texts for a GPU job', () => {
    expect(reasons(job('big', { requireCuda: true, minVramGib: 16 }), cluster())).toEqual([
      'ok desk: GPU 0, 4.4 GiB left after it',
      'ok rig: GPU 0, 4.4 GiB left after it',
      'no jetson: needs 16 GiB VRAM, 4.8 GiB usable left',
      'no cpu: needs CUDA, has no NVIDIA GPU',
    ]);
  });

  it('offline, another state, allowed_hosts, slots, RAM and cores; the CPU ok text', () => {
    const nodes = nodeCapacities(
      { nodes: [cpu, declared('spare', [], 1), declared('small', [], 1), declared('full', [], 1), declared('slow', [], 1), declared('free', [], 3)] },
      [
        worker('cpu', [], { cpuCores: 16, ramMb: 65536 }),
        worker('small', [], { ramMb: 4096 }),
        worker('full'),
        worker('slow', [], { cpuCores: 2 }),
        worker('free'),
        worker('old', [], { state: 'draining' }),
      ],
      [],
    );
    const holdings = [hold('full', 'other'), hold('free', 'x')];
    expect(reasons(job('j', { minRamGib: 8, minCores: 4, allowedHosts: ['small', 'full', 'slow', 'free', 'spare', 'old'] }), nodes, holdings)).toEqual([
      "no cpu: not in the job's allowed_hosts",
      'no spare: offline',
      'no small: needs 8 GiB RAM, has 4 GiB',
      'no full: all 1 adapter slot held, by job other',
      'no slow: needs 4 cores, has 2',
      'ok free: CPU, 1 of 3 slots left after it',
      'no old: draining',
    ]);
  });

  it('[[hosts]] deny and allow match the job name or its model', () => {
    const hosts = [
      { name: 'desk', allowJobs: null, denyJobs: ['tiny-gpt'] },
      { name: 'rig', allowJobs: ['gbt', 'mlp'], denyJobs: [] },
      { name: 'cpu', allowJobs: ['sweep-1'], denyJobs: [] },
    ];
    const nodes = matchingCluster([desk, rig, cpu], hosts);
    expect(reasons(job('sweep-1', { model: 'tiny-gpt' }), nodes)).toEqual([
      'no desk: [[hosts]] denies sweep-1',
      'no rig: [[hosts]] allows only gbt, mlp',
      'ok cpu: CPU, 1 of 2 slots left after it',
    ]);
    expect(reasons(job('gbt', { model: 'mlp' }), nodes)[1]).toBe('ok rig: CPU, 3 of 4 slots left after it');
  });

  it('a job that fits nowhere gets a preview with every node’s reason, and no placement', () => {
    const r = placeJobs([job('huge', { requireCuda: true, minVramGib: 40 })], cluster(), []);
    expect(r.placements).toEqual([]);
    expect(r.previews).toEqual([
      {
        jobId: 'huge',
        verdicts: [
          { node: 'desk', ok: false, reason: 'desk: needs 40 GiB VRAM, 20.4 GiB usable left' },
          { node: 'rig', ok: false, reason: 'rig: needs 40 GiB VRAM, 20.4 GiB usable left' },
          { node: 'jetson', ok: false, reason: 'jetson: needs 40 GiB VRAM, 4.8 GiB usable left' },
          { node: 'cpu', ok: false, reason: 'cpu: needs CUDA, has no NVIDIA GPU', permanent: true },
        ],
      },
    ]);
  });

  it('reasons shared between jobs still follow each job and the state it met', () => {
    const nodes = matchingCluster([declared('box', [], 1, { cpu_cores: 4, ram_mb: 8192 })], [{ name: 'box', allowJobs: null, denyJobs: ['x', 'y'] }]);
    const r = placeJobs([job('x'), job('y'), job('r1', { minRamGib: 16 }), job('r2', { minRamGib: 32 }), job('ok'), job('late')], nodes, []);
    expect(r.previews.map((p) => p.verdicts[0]!.reason)).toEqual([
      'box: [[hosts]] denies x',
      'box: [[hosts]] denies y',
      'box: needs 16 GiB RAM, has 8 GiB',
      'box: needs 32 GiB RAM, has 8 GiB',
      'box: all 1 adapter slot held, by job ok',
    ]);
  });

  it('placed jobs get no preview unless asked', () => {
    expect(placeJobs([job('a')], cluster(), []).previews).toEqual([]);
  });
});

describe('placeJobs choices', () => {
  const twoBoxes = () => matchingCluster([declared('b', [], 3), declared('a', [], 3)]);

  it('binpack fills one node before the next (ties by name); spread takes the most room', () => {
    const jobs = ['1', '2', '3', '4'].map((id) => job(id));
    expect(where(placeJobs(jobs, twoBoxes(), []))).toEqual(['a:cpu', 'a:cpu', 'a:cpu', 'b:cpu']);
    expect(where(placeJobs(jobs, twoBoxes(), [], { policy: 'spread' }))).toEqual(['a:cpu', 'b:cpu', 'a:cpu', 'b:cpu']);
  });

  it('GPU jobs: binpack takes the GPU with the least budget left, spread the most', () => {
    const jobs = ['1', '2', '3', '4', '5'].map((id) => job(id, { requireCuda: true, minVramGib: 4 }));
    // The jetson's 4.8 GiB is the tightest fit, then desk until its 3 slots are held, then the rig.
    expect(where(placeJobs(jobs, cluster(), []))).toEqual(['jetson:0', 'desk:0', 'desk:0', 'desk:0', 'rig:0']);
    expect(where(placeJobs(jobs, cluster(), [], { policy: 'spread' }))).toEqual(['rig:0', 'rig:1', 'desk:0', 'rig:0', 'rig:1']);
  });

  it('the same input always gives the same placements', () => {
    const jobs = Array.from({ length: 12 }, (_, i) => job(`j${i}`, { preferCuda: i % 2 === 0, minVramGib: i % 5 }));
    const nodes = cluster();
    expect(placeJobs(jobs, nodes, [], { previewPlaced: true })).toEqual(placeJobs(jobs, nodes, [], { previewPlaced: true }));
  });

  it('prefer_cuda takes a GPU when one fits and falls back to a CPU on any node when none does', () => {
    expect(where(placeJobs([job('p', { preferCuda: true, minVramGib: 4 })], cluster(), []))).toEqual(['jetson:0']);
    const small = matchingCluster([jetson, cpu]);
    const r = placeJobs([job('p', { preferCuda: true, minVramGib: 16 })], small, [], { previewPlaced: true });
    expect(r.placements).toEqual([{ jobId: 'p', node: 'jetson', workerId: small[0]!.workerId, gpuIndex: null, vramMb: 0 }]);
    expect(r.previews[0]!.verdicts.map((v) => v.reason)).toEqual([
      'jetson: CPU, 0 of 1 slots left after it (no GPU fits)',
      'cpu: CPU, 1 of 2 slots left after it (no GPU fits)',
    ]);
  });

  it('require_cuda never falls back to a CPU', () => {
    const r = placeJobs([job('r', { requireCuda: true, minVramGib: 16 })], matchingCluster([jetson, cpu]), []);
    expect(r.placements).toEqual([]);
  });

  it('a job with neither flag runs on a CPU and holds no GPU, even on a GPU node', () => {
    const r = placeJobs([job('c', { minVramGib: 8 })], matchingCluster([desk]), []);
    expect(r.placements).toEqual([expect.objectContaining({ node: 'desk', gpuIndex: null, vramMb: 0 })]);
  });

  it('only nodes with an active worker take work', () => {
    const nodes = nodeCapacities({ nodes: [desk, cpu] }, [worker('desk', [workerGpu('GPU-d', 24564)], { state: 'syncing' })], []);
    expect(placeJobs([job('x')], nodes, []).placements).toEqual([]);
  });
});

describe('the 5× PCIe rule (40 µs/MB, 0.01 µs/MFLOP, threshold 5)', () => {
  it('100 MB with 1e5 MFLOP is too small for a GPU: a CPU-only node first; the GPU nodes say why', () => {
    const r = placeJobs([job('s', { preferCuda: true, dataMb: 100, mflops: 1e5 })], cluster(), [], { previewPlaced: true });
    expect(where(r)).toEqual(['cpu:cpu']);
    expect(r.previews[0]!.verdicts[0]!.reason).toBe('desk: CPU, 2 of 3 slots left after it (5× PCIe rule: too small for a GPU)');
  });

  it('1 MB with 1e7 MFLOP goes to a GPU', () => {
    expect(where(placeJobs([job('g', { preferCuda: true, dataMb: 1, mflops: 1e7 })], cluster(), []))).toEqual(['jetson:0']);
  });

  it('applies only with both estimates, never to require_cuda, and takes a GPU node’s CPU when no CPU node has room', () => {
    expect(where(placeJobs([job('g', { preferCuda: true, dataMb: 100 })], cluster(), []))).toEqual(['jetson:0']);
    expect(where(placeJobs([job('g', { requireCuda: true, dataMb: 100, mflops: 1e5 })], cluster(), []))).toEqual(['jetson:0']);
    const full = [hold('cpu', 'a'), hold('cpu', 'b')];
    expect(where(placeJobs([job('s', { preferCuda: true, dataMb: 100, mflops: 1e5 })], cluster(), full))).toEqual(['jetson:cpu']);
  });

  it('a custom cost model moves the crossover', () => {
    const costModel = { pcieCostPerMb: 40, gpuComputePerMflop: 0.01, dispatchThreshold: 1e9 };
    expect(where(placeJobs([job('g', { preferCuda: true, dataMb: 1, mflops: 1e7 })], cluster(), [], { costModel }))).toEqual(['cpu:cpu']);
  });
});

describe('budgets and holdings', () => {
  it('a GPU never offers more than nvidia-smi shows free, less what placed work holds but does not use yet', () => {
    const nodes = nodeCapacities({ nodes: [desk] }, [worker('desk', [workerGpu('GPU-d', 24564)], { gpuFreeMb: new Map([[0, 5000]]) })], []);
    expect(reasons(job('big', { requireCuda: true, minVramGib: 6 }), nodes)).toEqual(['no desk: needs 6 GiB VRAM, 4.9 GiB usable left']);
    const twoGib = ['1', '2', '3'].map((id) => job(id, { requireCuda: true, minVramGib: 2 }));
    expect(where(placeJobs(twoGib, nodes, []))).toEqual(['desk:0', 'desk:0']); // 5000 − 2 × 2048 = 904 left
    // A running job using 1800 of its 2048 MB is mostly out of the free figure already: 5000 − 248 leaves room for two.
    const measured = hold('desk', 'running', { gpuIndex: 0, vramMb: 2048, measuredMb: 1800 });
    expect(where(placeJobs(twoGib, nodes, [measured]))).toEqual(['desk:0', 'desk:0']);
    // One that has not touched the GPU yet (measured 0) still counts in full: 5000 − 2048 leaves room for one.
    const loading = hold('desk', 'loading', { gpuIndex: 0, vramMb: 2048, measuredMb: 0 });
    expect(where(placeJobs(twoGib, nodes, [loading]))).toEqual(['desk:0']);
  });

  it('elastic runs hold a slot on each member', () => {
    const runs = [hold('jetson', 'run-1', { kind: 'run' }), hold('cpu', 'run-1', { kind: 'run' })];
    expect(reasons(job('c'), matchingCluster([jetson, cpu]), runs)).toEqual(['no jetson: all 1 adapter slot held, by run run-1', 'ok cpu: CPU, 0 of 2 slots left after it']);
  });

  it('held VRAM shrinks a GPU’s budget', () => {
    const held = [hold('jetson', 'a', { gpuIndex: 0, vramMb: 4000 })];
    const nodes = matchingCluster([declared('jetson', [gpuConfig('GPU-j', 8192, 'unified')], 2)]);
    expect(reasons(job('b', { requireCuda: true, minVramGib: 1 }), nodes, held)).toEqual(['no jetson: needs 1 GiB VRAM, 0.9 GiB usable left']);
  });

  it('a job placed on its measured peak + 10 % fits where its declared guess would not', () => {
    const nodes = matchingCluster([jetson]);
    expect(placeJobs([job('m', { requireCuda: true, minVramGib: 16 }, 4000)], nodes, []).placements).toEqual([
      { jobId: 'm', node: 'jetson', workerId: nodes[0]!.workerId, gpuIndex: 0, vramMb: 4400 },
    ]);
  });

  it('12 jobs over 10 slots: never more on a node than its slots; the two left over say why', () => {
    const r = placeJobs(Array.from({ length: 12 }, (_, i) => job(`j${i}`)), cluster(), []);
    const perNode = Object.fromEntries(['desk', 'rig', 'jetson', 'cpu'].map((n) => [n, r.placements.filter((p) => p.node === n).length]));
    expect(perNode).toEqual({ desk: 3, rig: 4, jetson: 1, cpu: 2 });
    expect(r.previews.map((p) => p.jobId)).toEqual(['j10', 'j11']);
    expect(r.previews[0]!.verdicts.map((v) => v.reason)).toEqual([
      // The slots reason names what holds them (issue 17 defect 9).
      'desk: all 3 adapter slots held, by job j3, job j4 and job j5',
      'rig: all 4 adapter slots held, by job j6, job j7, job j8 and 1 more',
      'jetson: all 1 adapter slot held, by job j0',
      'cpu: all 2 adapter slots held, by job j1 and job j2',
    ]);
  });

  it('8 GPU jobs of 8 GiB: two per 24 GB card, the rest wait with the VRAM or slots reason', () => {
    const r = placeJobs(Array.from({ length: 8 }, (_, i) => job(`g${i}`, { requireCuda: true, minVramGib: 8 })), cluster(), []);
    expect(where(r)).toEqual(['desk:0', 'desk:0', 'rig:0', 'rig:0', 'rig:1', 'rig:1']);
    expect(r.previews[0]!.verdicts.map((v) => v.reason)).toEqual([
      'desk: needs 8 GiB VRAM, 4.4 GiB usable left',
      'rig: all 4 adapter slots held, by job g2, job g3, job g4 and 1 more',
      'jetson: needs 8 GiB VRAM, 4.8 GiB usable left',
      'cpu: needs CUDA, has no NVIDIA GPU',
    ]);
  });
});
