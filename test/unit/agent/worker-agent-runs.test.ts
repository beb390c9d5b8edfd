/**
 * An agent on a machine with two GPUs is a member of two runs at once (issue 15 item 3: a GPU belongs to at most
 * one run member): one training per run, each on its own GPU, stopped and replaced on its own, each run's
 * instructions waiting only for that run's, each run's progress in the heartbeat, and every kept run named in the
 * re-attach claim after a coordinator restart.
 */
import { describe, expect, it } from 'vitest';
import type { WorkerAgent } from '../../../src-main/agent/worker-agent';
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import { detectedGpu } from '../helpers/detected-gpu';
import { agent, coordinator, hardware, logs, pids, shellPlan, startAgent as startBenchAgent, useAgentBench } from './agent-fixtures';
import { isAlive, waitFor } from './fake-coordinator';

const GPU0 = 'GPU-00000000-0000-0000-0000-000000000000';
const GPU1 = 'GPU-11111111-1111-1111-1111-111111111111';
const twoGpus: HardwareSnapshot = { ...hardware, gpus: [detectedGpu({ index: 0, uuid: GPU0 }), detectedGpu({ index: 1, uuid: GPU1 })] };

useAgentBench({ dirPrefix: 'gpu-share-agent-runs-' });

const startAgent = (stopGraceMs = 300): Promise<WorkerAgent> =>
  startBenchAgent({
    name: 'duo',
    detect: async () => twoGpus,
    probeResidency: async (o) => ({ status: 'pass', detail: `pid ${o.pid} resident`, pid: o.pid, usedMib: 100 }),
    stopGraceMs,
  });

/** A GPU run's plan for run `runId` on GPU `gpu` (its index among the agent's GPUs). */
function gpuPlan(runId: string, gpu: number, script: string, generation = 0) {
  return shellPlan(script, { runId, generation, rdzvId: `${runId}-g${generation}`, useGpus: true, gpuIndices: [gpu], env: { GPU_SHARE_RUN_ID: runId } });
}

const progressLoop = (loss: string) => `echo "cuda=[$CUDA_VISIBLE_DEVICES]"; s=0; while true; do echo "GPU_SHARE_PROGRESS {\\"step\\":$s,\\"loss\\":${loss}}"; s=$((s+1)); sleep 0.1; done`;

const started = (runId: string, generation = 0) =>
  waitFor(`run ${runId} generation ${generation} started`, () => coordinator.reportsOf('started').find((r) => r.runId === runId && r.generation === generation)).then((r) => {
    pids.push(r.pid);
    return r.pid;
  });

const outputOf = (runId: string) =>
  coordinator
    .reportsOf('output')
    .filter((r) => r.runId === runId)
    .map((r) => r.data)
    .join('');

describe('WorkerAgent with two GPUs, a member of two runs', () => {
  it('offers a rendezvous port per GPU, trains both runs at once each on its own GPU, and heartbeats each run\'s progress', async () => {
    await startAgent();
    const ports = coordinator.joins[0]!.body.rdzvPorts as number[];
    expect(ports).toHaveLength(2);
    expect(new Set(ports).size).toBe(2);
    expect(ports[0]).toBe(coordinator.joins[0]!.body.rdzvPort);

    coordinator.give({ kind: 'start', plan: gpuPlan('run-a', 0, progressLoop('0.5')) });
    coordinator.give({ kind: 'start', plan: gpuPlan('run-b', 1, progressLoop('0.25')) });
    const [a, b] = await Promise.all([started('run-a'), started('run-b')]);
    expect(a).not.toBe(b);
    await waitFor('both CUDA lines', () => outputOf('run-a').includes('cuda=') && outputOf('run-b').includes('cuda='));
    expect(outputOf('run-a')).toContain(`cuda=[${GPU0}]`);
    expect(outputOf('run-b')).toContain(`cuda=[${GPU1}]`);
    expect(isAlive(a) && isAlive(b)).toBe(true);
    expect(agent!.status().runs.map((r) => r.runId).sort()).toEqual(['run-a', 'run-b']);

    const beat = await waitFor('a heartbeat with both runs', () => coordinator.heartbeats.find((h) => (h.body.runs?.length ?? 0) === 2));
    expect(beat.body.runs!.map((p) => [p.runId, p.loss]).sort()).toEqual([
      ['run-a', 0.5],
      ['run-b', 0.25],
    ]);
  });

  it('a stop or a new generation of one run leaves the other run training (same pid)', async () => {
    await startAgent();
    coordinator.give({ kind: 'start', plan: gpuPlan('run-a', 0, 'sleep 60') });
    coordinator.give({ kind: 'start', plan: gpuPlan('run-b', 1, 'sleep 60') });
    const [a, b] = await Promise.all([started('run-a'), started('run-b')]);

    coordinator.give({ kind: 'start', plan: gpuPlan('run-a', 0, 'sleep 60', 1) });
    await started('run-a', 1);
    const replaced = await waitFor('run-a generation 0 exit', () => coordinator.reportsOf('exited').find((e) => e.runId === 'run-a' && e.generation === 0));
    expect(replaced.requested).toBe(true);
    expect(isAlive(a)).toBe(false);
    expect(isAlive(b)).toBe(true);

    coordinator.give({ kind: 'stop', runId: 'run-b', generation: 0, reason: 'stopped by user' });
    await waitFor('run-b exit', () => coordinator.reportsOf('exited').find((e) => e.runId === 'run-b'));
    expect(isAlive(b)).toBe(false);
    expect(agent!.status().runs).toEqual([{ runId: 'run-a', generation: 1, pid: expect.any(Number) }]);
    expect(coordinator.reportsOf('exited').filter((e) => e.runId === 'run-a')).toHaveLength(1);
  });

  it("one run's stop grace does not hold up the other run's start", async () => {
    await startAgent(3000);
    // Ignores SIGTERM: its stop takes the whole 3 s grace before the SIGKILL.
    coordinator.give({ kind: 'start', plan: gpuPlan('run-a', 0, "trap '' TERM; while true; do sleep 0.05; done") });
    const a = await started('run-a');
    coordinator.give({ kind: 'stop', runId: 'run-a', generation: 0, reason: 'stopped by user' });
    await waitFor('the stop to begin', () => logs.some((l) => l.startsWith('stopping run run-a')));
    coordinator.give({ kind: 'start', plan: gpuPlan('run-b', 1, 'sleep 60') });
    await started('run-b');
    // run-b started while run-a was still in its grace (it ignores SIGTERM).
    expect(isAlive(a)).toBe(true);
    expect(coordinator.reportsOf('exited').find((e) => e.runId === 'run-a')).toBeUndefined();
    await waitFor('run-a killed after its grace', () => coordinator.reportsOf('exited').find((e) => e.runId === 'run-a'), 6000);
  });

  it('after a coordinator restart its claim names every run it kept, and both trainers keep their pids', async () => {
    coordinator.epoch = 'AAAAAAAAAAAAAAAA';
    coordinator.failoverGraceMs = 5000;
    await startAgent();
    coordinator.give({ kind: 'start', plan: gpuPlan('run-a', 0, 'sleep 60') });
    coordinator.give({ kind: 'start', plan: gpuPlan('run-b', 1, 'sleep 60', 3) });
    const [a, b] = await Promise.all([started('run-a'), started('run-b', 3)]);
    coordinator.restart();
    await waitFor('the re-attach', () => coordinator.joins.length === 2, 5000);
    expect(coordinator.joins[1]!.body.reattach).toEqual({
      epoch: 'AAAAAAAAAAAAAAAA',
      incarnation: 1,
      runId: 'run-a',
      generation: 0,
      runs: [
        { runId: 'run-a', generation: 0 },
        { runId: 'run-b', generation: 3 },
      ],
    });
    await waitFor('joined again', () => agent!.status().phase === 'joined', 5000);
    expect(isAlive(a) && isAlive(b)).toBe(true);
    expect(agent!.status().runs.map((r) => r.pid)).toEqual([a, b]);
  });

  it('a run whose trainer already exited is claimed as ended, after the runs still going', async () => {
    coordinator.epoch = 'AAAAAAAAAAAAAAAA';
    coordinator.failoverGraceMs = 5000;
    await startAgent();
    coordinator.give({ kind: 'start', plan: gpuPlan('run-a', 0, 'true') });
    await waitFor('run-a exit', () => coordinator.reportsOf('exited').find((e) => e.runId === 'run-a'));
    coordinator.give({ kind: 'start', plan: gpuPlan('run-b', 1, 'sleep 60') });
    await started('run-b');
    coordinator.restart();
    await waitFor('the re-attach', () => coordinator.joins.length === 2, 5000);
    expect(coordinator.joins[1]!.body.reattach).toMatchObject({
      runId: 'run-b',
      generation: 0,
      runs: [
        { runId: 'run-b', generation: 0 },
        { runId: 'run-a', generation: 0, ended: true },
      ],
    });
  });
});
