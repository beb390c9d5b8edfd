// The bounded pieces of a run's record: output log (with text kept across a restart), launch plan.
import { describe, expect, it, vi } from 'vitest';
import { buildLaunchPlan, formatEndpoint } from '../../../src-main/core/coordinator/runs/launch-plan';
import { RunOutputLog } from '../../../src-main/core/coordinator/runs/run-output-log';
import { runSpecSchema } from '../../../src-shared/worker-protocol';

describe('RunOutputLog', () => {
  it('goes on from text kept before a restart', () => {
    const log = new RunOutputLog();
    log.seed('[a] one\n[b] tw');
    log.append(0, 'a', 'three\n');
    expect(log.text()).toBe('[a] one\n[b] tw\n[a] three\n');
  });

  it('keeps each worker’s lines whole and prefixed, even when chunks interleave mid-line', () => {
    const log = new RunOutputLog();
    log.append(0, 'desktop', 'GPU_SHARE_PROGRESS {"st');
    log.append(1, 'jetson', 'loading\nready\n');
    log.append(0, 'desktop', 'ep":1}\n');
    expect(log.text()).toBe('[jetson] loading\n[jetson] ready\n[desktop] GPU_SHARE_PROGRESS {"step":1}\n');
  });

  it('prefixes every line of a many-line chunk (empty ones and \\r\\n too) in one pass, without splitting it into lines', () => {
    const log = new RunOutputLog();
    const split = vi.spyOn(String.prototype, 'split');
    try {
      log.append(0, 'desktop', 'a\r\n\nGPU_SHARE_PROGRESS {"step":1}\r\nb\npart');
      expect(split).not.toHaveBeenCalled(); // this runs for every chunk of every worker's output
    } finally {
      split.mockRestore();
    }
    expect(log.text()).toBe('[desktop] a\r\n[desktop] \n[desktop] GPU_SHARE_PROGRESS {"step":1}\r\n[desktop] b\n[desktop] part');
  });

  it('shows an unfinished line at the end, and writes out a runaway one', () => {
    const log = new RunOutputLog();
    log.append(0, 'a', 'Password: ');
    expect(log.text()).toBe('[a] Password: ');
    log.append(1, 'b', 'x'.repeat(5000));
    expect(log.text().startsWith(`[b] ${'x'.repeat(5000)}\n`)).toBe(true);
  });

  it('drops the oldest text past the cap and never holds more than the cap', () => {
    const log = new RunOutputLog(1000);
    for (let i = 0; i < 500; i++) log.append(0, 'n', `line ${i}\n`);
    const text = log.text();
    expect(text.length).toBe(1000);
    expect(text.endsWith('[n] line 499\n')).toBe(true);
    expect(text).not.toContain('line 1\n');
  });
});

describe('launch plan', () => {
  it('brackets IPv6 hosts and leaves names and IPv4 alone', () => {
    expect(formatEndpoint('::1', 29500)).toBe('[::1]:29500');
    expect(formatEndpoint('[fe80::1]', 1)).toBe('[fe80::1]:1');
    expect(formatEndpoint('jetson.local', 29500)).toBe('jetson.local:29500');
  });

  it('carries the comm decision and ring position last, so a run env cannot spoof them', () => {
    const spec = runSpecSchema.parse({ command: ['t.py'], samples: 10, env: { GPU_SHARE_COMM: 'powersgd', GPU_SHARE_NODE_RANK: '7', GPU_SHARE_LOCAL_SGD_PERIOD: '2' } });
    const base = { runId: 'r', generation: 2, spec, workerId: 3, node: 'jetson', shardStart: 0, shardEnd: 5, numWorkers: 2, rdzvEndpoint: 'h:1', localAddr: '10.0.0.3', rdzvHost: false };
    const local = buildLaunchPlan({ ...base, comm: { strategy: 'local-sgd', localSgdPeriod: 16 }, nodeRank: 1 });
    expect(local.env).toMatchObject({ GPU_SHARE_COMM: 'local-sgd', GPU_SHARE_LOCAL_SGD_PERIOD: '16', GPU_SHARE_NODE_RANK: '1' });
    expect(local.env.GPU_SHARE_LOCAL_SGD_WARMUP).toBe('100'); // the run's start
    // Not a generation that moved to local SGD mid-run (a link slowed at step 40).
    expect(buildLaunchPlan({ ...base, startStep: 40, comm: { strategy: 'local-sgd', localSgdPeriod: 16 } }).env.GPU_SHARE_LOCAL_SGD_WARMUP).toBeUndefined();
    const fp16 = buildLaunchPlan({ ...base, comm: { strategy: 'fp16', localSgdPeriod: null }, nodeRank: 0 });
    expect(fp16.env).toMatchObject({ GPU_SHARE_COMM: 'fp16', GPU_SHARE_NODE_RANK: '0' });
    expect(fp16.env.GPU_SHARE_LOCAL_SGD_PERIOD).toBeUndefined();
  });

  it('nnodes is MIN:n for the generation, and the run env cannot override GPU_SHARE_*', () => {
    const spec = runSpecSchema.parse({ command: ['t.py'], samples: 10, minWorkers: 2, maxWorkers: 8, env: { GPU_SHARE_NODE: 'evil', X: '1' } });
    const plan = buildLaunchPlan({ runId: 'r', generation: 4, spec, workerId: 3, node: 'jetson', shardStart: 5, shardEnd: 10, numWorkers: 3, rdzvEndpoint: 'h:1', localAddr: '10.0.0.3', rdzvHost: false });
    expect(plan.nnodes).toBe('2:3');
    expect(plan.rdzvId).toBe('r-g4');
    expect(plan.env.GPU_SHARE_NODE).toBe('jetson');
    expect(plan.env.X).toBe('1');
    expect(plan).toMatchObject({ localAddr: '10.0.0.3', rdzvHost: false });
  });
});
