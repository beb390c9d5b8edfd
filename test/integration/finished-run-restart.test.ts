/**
 * A finished run's record is the same after serve restarts (issue 25 item 1: the loss chart began at step 7
 * instead of 0 and `runs logs` lost its first lines, "launching generation 1 … (run started)"). `gpu-share
 * serve` (the built CLI) and two `gpu-share worker` agents as OS processes on 127.0.0.1, the example trainer on
 * real torchrun (gloo, CPU), two workers in one DDP generation. Once the run finished, its loss curve, output,
 * events, generation marks, metrics and series are read; serve is stopped cleanly and started again on the same data
 * folder, then SIGKILLed and started again: each time all of them come back equal.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunSeries } from '../../src-shared/runs/run-series';
import { findRepoRoot } from './helpers/agent-bundle';
import { TORCH_PYTHON } from './helpers/agent-handle';
import { poll, readSettled, restartServe, useServedCluster, type ServedCluster as Cluster } from './helpers/served-cluster';

const ENDED = new Set(['finished', 'failed', 'stopped']);
const TRAINER = path.join(findRepoRoot(), 'assets', 'trainers', 'ddp_example.py');
const torchMissing = spawnSync(TORCH_PYTHON, ['-c', 'import torch'], { encoding: 'utf8' }).status !== 0;
if (torchMissing && process.env.CI === 'true') throw new Error(`CI must run the finished-run restart test, but ${TORCH_PYTHON} cannot import torch`);

const requireCluster = useServedCluster({ prefix: 'gpu-share-finished-restart-', agents: ['alpha', 'beta'], skip: torchMissing });

/** Everything a person sees of a run's record: what must not change across a restart. */
async function record(c: Cluster, runId: string) {
  const state = await c.api.state();
  const run = state.runs.find((r) => r.id === runId)!;
  return {
    state: run.state,
    lossHistory: run.lossHistory,
    metrics: run.metrics,
    generationMarks: run.generationMarks,
    output: await c.api.output(runId),
    events: state.events.filter((e) => e.runId === runId),
    series: await c.api.request<RunSeries>('GET', `/v1/runs/${encodeURIComponent(runId)}/series`),
  };
}

describe.skipIf(torchMissing)(`serve restarted: a finished run's record comes back whole (needs ${TORCH_PYTHON} with torch)`, () => {
  it('its loss curve from step 0, its output from the first line, its events and series are equal after a stop and after a SIGKILL', async () => {
    const c = requireCluster();
    const run = await c.api.startRun({
      name: 'record across restarts',
      command: [TRAINER, '--steps', '60', '--step-sleep', '0.05', '--checkpoint-every', '10', '--batch', '8'],
      samples: 512,
      minWorkers: 2,
      maxWorkers: 2,
      nprocPerNode: 1,
    });
    const ended = await poll(`run ${run.id} to end`, async () => {
      const r = (await c.api.state()).runs.find((x) => x.id === run.id);
      if (r && !ENDED.has(r.state)) throw new Error(`run ${r.state} (${r.stateCause}), step ${r.progress?.step ?? '-'}; output ends ${JSON.stringify((await c.api.output(run.id)).slice(-600))}`);
      return r;
    }, 300_000);
    expect(ended.state, ended.stateCause ?? '').toBe('finished');
    const before = await readSettled(() => record(c, run.id));
    // What the record must hold in the first place: the curve from the first step, the output from the launch.
    expect(before.lossHistory[0]?.step, JSON.stringify(before.lossHistory.slice(0, 5))).toBeLessThanOrEqual(1);
    expect(before.output).toContain('launching generation 1 on 2 workers');
    // The trainer's other numbers (lr, grad_norm) are charted from its first step too (issue 25, "Any metric").
    expect(before.metrics?.map((m) => [m.name, m.points[0]?.step])).toEqual([['grad_norm', 0], ['lr', 0]]);
    expect(before.events.length).toBeGreaterThan(0);

    await c.serve.stop();
    c.serve = await restartServe(c);
    const afterStop = await record(c, run.id);
    expect(afterStop.lossHistory, 'the loss curve after a clean stop').toEqual(before.lossHistory);
    expect(afterStop.output, 'the output after a clean stop').toBe(before.output);
    expect(afterStop).toEqual(before);

    expect(await c.serve.kill()).toEqual({ code: null, signal: 'SIGKILL' });
    c.serve = await restartServe(c);
    expect(await record(c, run.id)).toEqual(before);
  }, 480_000);
});
