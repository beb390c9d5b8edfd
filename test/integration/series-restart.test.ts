/**
 * A run's series (samples/s, each member's resources) survive serve restarting, with nothing faked (issue 17's
 * known limit: before, a restart started them empty and the page's samples/s chart was blank). `gpu-share serve`
 * (the built CLI) and one `gpu-share worker` agent as OS processes on 127.0.0.1, the example trainer on real
 * torchrun (gloo, CPU). Mid-run, serve is stopped cleanly (the app closing: it writes what changed) and started
 * on the same data folder and ports: GET /v1/runs/{id}/series begins with everything it answered before the stop
 * and goes on from there. Once the run finished (saved at its end), serve is SIGKILLed and started again: the
 * series come back exactly as they were.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunSeries } from '../../src-shared/runs/run-series';
import type { RunSnapshot } from '../../src-shared/training';
import { findRepoRoot } from './helpers/agent-bundle';
import { TORCH_PYTHON } from './helpers/agent-handle';
import { poll, readSettled, restartServe, useServedCluster, type ServedCluster as Cluster } from './helpers/served-cluster';

const ENDED = new Set(['finished', 'failed', 'stopped']);
const root = findRepoRoot();
const TRAINER = path.join(root, 'assets', 'trainers', 'ddp_example.py');
const torchMissing = spawnSync(TORCH_PYTHON, ['-c', 'import torch'], { encoding: 'utf8' }).status !== 0;
if (torchMissing && process.env.CI === 'true') throw new Error(`CI must run the series restart test, but ${TORCH_PYTHON} cannot import torch`);

const requireCluster = useServedCluster({ prefix: 'gpu-share-series-restart-', agents: ['alpha'], skip: torchMissing });

const series = (c: Cluster, runId: string) => c.api.request<RunSeries>('GET', `/v1/runs/${encodeURIComponent(runId)}/series`);

async function runNow(c: Cluster, runId: string): Promise<RunSnapshot | undefined> {
  return (await c.api.state()).runs.find((r) => r.id === runId);
}

/** `later`'s first points as many as `earlier` holds: what a restart must have kept. */
function keptPrefix(earlier: RunSeries, later: RunSeries): RunSeries {
  const n = earlier.throughput!.at.length;
  const t = later.throughput!;
  const workers: Record<number, { node: string; values: (number | null)[] }> = {};
  for (const [id, w] of Object.entries(t.workers)) if (earlier.throughput!.workers[Number(id)]) workers[Number(id)] = { node: w.node, values: w.values.slice(0, n) };
  const resources: RunSeries['resources'] = {};
  for (const [id, h] of Object.entries(later.resources)) {
    const had = earlier.resources[Number(id)];
    if (had) resources[Number(id)] = { node: h.node, samples: h.samples.slice(0, had.samples.length) };
  }
  return { runId: later.runId, throughput: { startedAt: t.startedAt, at: t.at.slice(0, n), total: t.total.slice(0, n), workers }, resources };
}

describe.skipIf(torchMissing)(`serve restarted: a run's samples/s and resource series come back (needs ${TORCH_PYTHON} with torch; skipped without it, except under CI)`, () => {
  it('a clean stop mid-run keeps all it had; after the run finished, a SIGKILL keeps it exactly', async () => {
    const c = requireCluster();
    const run = await c.api.startRun({
      name: 'series across restarts',
      command: [TRAINER, '--steps', '90', '--step-sleep', '0.1', '--checkpoint-every', '10', '--batch', '8'],
      samples: 512,
      minWorkers: 1,
      maxWorkers: 1,
      nprocPerNode: 1,
    });
    // A few seconds of training: several samples/s points and resource samples.
    const before = await poll('a few samples/s points and resource samples', async () => {
      const s = await series(c, run.id);
      const enough = (s.throughput?.at.length ?? 0) >= 4 && Object.values(s.resources).some((h) => h.samples.length >= 4);
      return enough ? s : null;
    }, 120_000);
    expect((await runNow(c, run.id))?.state).toBe('running');

    await c.serve.stop();
    c.serve = await restartServe(c);
    const back = await series(c, run.id);
    expect(back.throughput, 'the samples/s series after the restart').not.toBeNull();
    expect(keptPrefix(before, back)).toEqual(before);

    const finished = await poll(`run ${run.id} to end`, async () => {
      const r = await runNow(c, run.id);
      return r && ENDED.has(r.state) ? r : null;
    }, 240_000);
    expect(finished.state, finished.stateCause ?? '').toBe('finished');
    const whole = await readSettled(() => series(c, run.id));
    // Points from after the restart joined those from before it.
    expect(whole.throughput!.at.length).toBeGreaterThan(before.throughput!.at.length);
    expect(keptPrefix(before, whole)).toEqual(before);

    expect(await c.serve.kill()).toEqual({ code: null, signal: 'SIGKILL' });
    c.serve = await restartServe(c);
    expect(await series(c, run.id)).toEqual(whole);
  }, 420_000);
});
