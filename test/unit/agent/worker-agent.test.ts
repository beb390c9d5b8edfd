import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lostAfterMs, type WorkerAgent, type WorkerAgentOptions } from '../../../src-main/agent/worker-agent';
import type { ProbeResidencyOptions, ResidencyResult } from '../../../src-main/platform/hardware/residency';
import { agent, coordinator, dataDir, logs, newAgent, pids, replaceCoordinator, shellPlan, TOKEN, useAgentBench } from './agent-fixtures';
import { FakeCoordinator, isAlive, waitFor } from './fake-coordinator';

useAgentBench({ dirPrefix: 'gpu-share-agent-' });

/** An agent whose own environment holds what a trainer must not inherit (the filter is under test). */
const makeAgent = (extra: Partial<WorkerAgentOptions> = {}): WorkerAgent =>
  newAgent({
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      NODE_OPTIONS: '--require /nowhere.js',
      GPU_SHARE_JOIN_TOKEN: TOKEN,
      ELECTRON_RUN_AS_NODE: '1',
    },
    ...extra,
  });


const startedPid = async (generation = 0): Promise<number> => {
  const r = await waitFor(`a started report for generation ${generation}`, () => coordinator.reportsOf('started').find((x) => x.generation === generation));
  pids.push(r.pid);
  return r.pid;
};

describe('WorkerAgent', () => {
  it('joins with what it detected, then heartbeats', async () => {
    const joined = await makeAgent().start();
    expect(joined).toEqual({ workerId: 7, incarnation: 1, heartbeatIntervalMs: 100, heartbeatTimeoutMs: 500, sessionSecret: coordinator.session });
    const join = coordinator.joins[0]!.body;
    expect(join.node).toBe('alpha');
    // Only the NVIDIA GPU: CUDA_VISIBLE_DEVICES cannot name the Intel one.
    expect(join.gpus).toEqual([{ uuid: 'GPU-11111111-2222-3333-4444-555555555555', name: 'NVIDIA GeForce RTX 4090', vramTotalMb: 24564 }]);
    expect(join.cpuCores).toBe(4);
    expect(join.ramMb).toBe(8192);
    expect(join.advertiseHost).toBe('127.0.0.1');
    expect(join.rdzvPort).toBeGreaterThan(0);
    expect(join.python).toBeNull();
    expect(join.local).toBe(false);
    await waitFor('three heartbeats', () => coordinator.heartbeats.length >= 3);
    expect(coordinator.heartbeats.every((h) => h.body.incarnation === 1)).toBe(true);
    expect(agent!.status()).toMatchObject({ phase: 'joined', workerId: 7, incarnation: 1, node: 'alpha', runs: [], progress: [] });
    expect(logs.some((l) => l.includes('joined http://127.0.0.1') && l.includes('as worker 7 (incarnation 1)'))).toBe(true);
  });

  it('runs a start instruction in a pty with the filtered env, streams output and progress, and reports the exit', async () => {
    makeAgent();
    await agent!.start();
    const script = [
      'echo "ckpt=$GPU_SHARE_CHECKPOINT_DIR"',
      'echo "cuda=[$CUDA_VISIBLE_DEVICES] shard=$GPU_SHARE_SHARD_START-$GPU_SHARE_SHARD_END rank=$RANK world=$WORLD_SIZE"',
      'echo "leaks=[$NODE_OPTIONS$GPU_SHARE_JOIN_TOKEN$ELECTRON_RUN_AS_NODE]"',
      'for s in 0 1 2; do echo "GPU_SHARE_PROGRESS {\\"step\\":$s,\\"loss\\":0.$s,\\"samples_per_sec\\":10,\\"resumed_from\\":0}"; sleep 0.1; done',
    ].join('; ');
    coordinator.give({ kind: 'start', plan: shellPlan(script) });
    const pid = await startedPid();
    const exited = await waitFor('the exit report', () => coordinator.reportsOf('exited')[0]);
    expect(exited).toEqual({ type: 'exited', runId: 'run-1', generation: 0, exitCode: 0, signal: null, requested: false });
    const out = coordinator.output();
    expect(out).toContain(`ckpt=${path.join(dataDir, 'checkpoints', 'run-1')}`);
    expect(out).toContain('cuda=[] shard=0-100 rank=0 world=1');
    expect(out).toContain('leaks=[]');
    const progress = coordinator.heartbeats.map((h) => h.body.progress).filter((p) => p !== null);
    await waitFor('a heartbeat carrying step 2', () => coordinator.heartbeats.some((h) => h.body.progress?.step === 2));
    expect(progress.every((p) => p!.runId === 'run-1' && p!.generation === 0)).toBe(true);
    expect(coordinator.heartbeats.find((h) => h.body.progress?.step === 2)!.body.progress).toEqual({
      runId: 'run-1',
      generation: 0,
      step: 2,
      loss: 0.2,
      samplesPerSec: 10,
      resumedFrom: 0,
      totalSteps: null,
    });
    // Order: started before output before exited.
    const types = coordinator.reports.map((r) => r.report.type);
    expect(types.indexOf('started')).toBeLessThan(types.indexOf('output'));
    expect(types.lastIndexOf('output')).toBeLessThan(types.indexOf('exited'));
    expect(isAlive(pid)).toBe(false);
  });

  it('sends the final progress before the exit report, so a finished run shows its real last step', async () => {
    // Heartbeats 2 s apart: the steps below all happen between two of them.
    await replaceCoordinator(new FakeCoordinator(TOKEN, 2000, 10_000));
    coordinator.give({
      kind: 'start',
      plan: shellPlan('for s in 0 1 2 3; do echo "GPU_SHARE_PROGRESS {\\"step\\":$s,\\"loss\\":1,\\"samples_per_sec\\":5,\\"resumed_from\\":0}"; done; sleep 0.2'),
    });
    makeAgent();
    await agent!.start();
    await startedPid();
    await waitFor('the exit report', () => coordinator.reportsOf('exited')[0], 15_000);
    // Already there when the exit arrived, not at the next regular heartbeat.
    expect(coordinator.heartbeats.some((h) => h.body.progress?.step === 3)).toBe(true);
  });

  it('stop kills the whole process group and reports the exit as requested', async () => {
    makeAgent();
    await agent!.start();
    coordinator.give({ kind: 'start', plan: shellPlan('sleep 60 & echo "child=$!"; wait') });
    const pid = await startedPid();
    const child = await waitFor('the child pid in the output', () => Number(/child=(\d+)/.exec(coordinator.output())?.[1]) || null);
    coordinator.give({ kind: 'stop', runId: 'run-1', generation: 0, reason: 'stopped by user' });
    const exited = await waitFor('the exit report', () => coordinator.reportsOf('exited')[0]);
    expect(exited.requested).toBe(true);
    expect(exited.signal).not.toBeNull();
    await waitFor('the launcher and its child to be gone', () => !isAlive(pid) && !isAlive(child), 5000);
    expect(agent!.status().runs).toEqual([]);
  });

  it('a start for a new generation replaces the running one; a repeated start is ignored', async () => {
    makeAgent();
    await agent!.start();
    coordinator.give({ kind: 'start', plan: shellPlan('sleep 60') });
    coordinator.give({ kind: 'start', plan: shellPlan('sleep 60') });
    const first = await startedPid(0);
    coordinator.give({ kind: 'start', plan: shellPlan('echo gen1; sleep 60', { generation: 1, rdzvId: 'run-1-g1' }) });
    await startedPid(1);
    const exited0 = await waitFor('generation 0 exit', () => coordinator.reportsOf('exited').find((e) => e.generation === 0));
    expect(exited0.requested).toBe(true);
    expect(isAlive(first)).toBe(false);
    expect(coordinator.reportsOf('started').filter((s) => s.generation === 0)).toHaveLength(1);
    expect(agent!.status().runs).toEqual([{ runId: 'run-1', generation: 1, pid: expect.any(Number) }]);
  });

  it('acknowledges numbered instructions and obeys each once, though the coordinator repeats it until acknowledged', async () => {
    coordinator.numbered = true;
    makeAgent();
    await agent!.start();
    coordinator.give({ kind: 'reboot' }); // invalid: skipped, but its number is taken
    coordinator.give({ kind: 'start', plan: shellPlan('echo ran-once') });
    await waitFor('the run to end', () => coordinator.reportsOf('exited').length === 1);
    await waitFor('the ack of both', () => coordinator.heartbeats.some((h) => h.body.ack === 2));
    const before = coordinator.heartbeats.length;
    await waitFor('more heartbeats', () => coordinator.heartbeats.length > before + 3);
    expect(coordinator.reportsOf('started')).toHaveLength(1);
    expect(coordinator.output().match(/ran-once/g)).toHaveLength(1);
    expect(coordinator.pending).toEqual([]);
  });

  it('numbers its report batches and sends a batch whose answer was lost again with the same number and contents', async () => {
    makeAgent();
    await agent!.start();
    coordinator.loseReportAnswers = 1; // the first batch arrives, but its answer never reaches the agent
    coordinator.give({ kind: 'start', plan: shellPlan('echo said-once; sleep 0.3') });
    await waitFor('the exit report', () => coordinator.reportsOf('exited')[0]);
    const [first, again, ...rest] = coordinator.batches;
    expect(first!.batchSeq).toBe(1);
    expect(again).toEqual(first);
    expect(rest.map((b) => b.batchSeq)).toEqual(rest.map((_, i) => i + 2));
    expect(coordinator.reportsOf('started')).toHaveLength(1);
    expect(coordinator.output().match(/said-once/g)).toHaveLength(1);
  });

  it('ignores invalid instructions, obeys the valid ones beside them, and keeps heartbeating', async () => {
    makeAgent();
    await agent!.start();
    coordinator.give({ kind: 'reboot' });
    coordinator.give({ kind: 'start', plan: { runId: 'x' } });
    coordinator.give({ kind: 'start', plan: shellPlan('echo valid-one') });
    coordinator.give('nonsense');
    await waitFor('the valid start to run', () => coordinator.output().includes('valid-one'));
    await waitFor('the run to end', () => coordinator.reportsOf('exited').length === 1);
    const before = coordinator.heartbeats.length;
    await waitFor('more heartbeats', () => coordinator.heartbeats.length > before + 2);
    expect(logs.filter((l) => l.startsWith('ignored an invalid instruction'))).toHaveLength(3);
    expect(agent!.status().phase).toBe('joined');
  });

  it('on 409 (declared failed) it kills its training and joins again as a new incarnation', async () => {
    makeAgent();
    await agent!.start();
    coordinator.give({ kind: 'start', plan: shellPlan('sleep 60') });
    const pid = await startedPid();
    coordinator.mode = 'stale-409';
    await waitFor('a second join', () => coordinator.joins.length === 2, 5000);
    expect(isAlive(pid)).toBe(false);
    expect(coordinator.joins[1]!.incarnation).toBe(2);
    await waitFor('heartbeats of incarnation 2', () => coordinator.heartbeats.some((h) => h.body.incarnation === 2));
    expect(agent!.status()).toMatchObject({ phase: 'joined', incarnation: 2, runs: [] });
    expect(logs.some((l) => l.startsWith('lost the coordinator: the coordinator no longer knows this session (409'))).toBe(true);
  });

  it('kills its training once heartbeats fail for longer than the timeout, then rejoins when the coordinator is back', async () => {
    makeAgent();
    await agent!.start();
    coordinator.give({ kind: 'start', plan: shellPlan('sleep 60 & echo "child=$!"; wait') });
    const pid = await startedPid();
    const child = await waitFor('the child pid', () => Number(/child=(\d+)/.exec(coordinator.output())?.[1]) || null);
    coordinator.mode = 'error-503';
    const failedAt = Date.now();
    await waitFor('training to be killed', () => !isAlive(pid) && !isAlive(child), 5000);
    const tookMs = Date.now() - failedAt;
    // Not before the timeout plus its margin (500 + 250 ms, lostAfterMs) counted from the last good heartbeat,
    // which may be one interval (100 ms, the floor of TIMING_BOUNDS) before the failures began: a coordinator
    // hiccup, or answers slower than requests, must not kill training.
    expect(tookMs).toBeGreaterThanOrEqual(lostAfterMs({ heartbeatTimeoutMs: 500, heartbeatIntervalMs: 100 }) - 100 - 20);
    expect(tookMs).toBeLessThan(500 + 300 + 1500);
    expect(logs.some((l) => /^lost the coordinator: no successful heartbeat for \d\.\d s \(last answer: 503 coordinator overloaded\)/.test(l))).toBe(true);
    // The joins keep coming while it is away; the fake answers them and goes back to normal.
    await waitFor('the rejoin', () => coordinator.joins.length === 2, 5000);
    // The fake records the join before its answer reaches the agent: wait for the agent to take it.
    await waitFor('the agent to be joined again', () => agent!.status().phase === 'joined', 5000);
    expect(agent!.status().phase).toBe('joined');
  });

  it('follows a failure timeout the coordinator changes later (a run with its own timeout)', async () => {
    makeAgent();
    await agent!.start();
    coordinator.heartbeatTimeoutInReplies = 1500;
    await waitFor('the new timeout to be taken', () => logs.some((l) => l.includes("failure timeout is now 1500 ms (was 500 ms)")));
    coordinator.give({ kind: 'start', plan: shellPlan('sleep 60') });
    const pid = await startedPid();
    coordinator.mode = 'error-503';
    const failedAt = Date.now();
    await waitFor('training to be killed', () => !isAlive(pid), 8000);
    expect(Date.now() - failedAt).toBeGreaterThanOrEqual(1400);
  });

  it('a coordinator that stops answering at all (hung requests) is lost too', async () => {
    makeAgent();
    await agent!.start();
    coordinator.give({ kind: 'start', plan: shellPlan('sleep 60') });
    const pid = await startedPid();
    coordinator.mode = 'hang';
    await waitFor('training to be killed', () => !isAlive(pid), 5000);
    expect(logs.some((l) => /^lost the coordinator: no successful heartbeat for \d\.\d s/.test(l))).toBe(true);
    await waitFor('the rejoin once the coordinator answers again', () => coordinator.joins.length === 2, 5000);
  });

  it('drain stops training, says goodbye and ends the agent', async () => {
    makeAgent();
    await agent!.start();
    coordinator.give({ kind: 'start', plan: shellPlan('sleep 60') });
    const pid = await startedPid();
    coordinator.give({ kind: 'drain', reason: 'drained by user' });
    const exit = await agent!.exited;
    expect(exit).toEqual({ reason: 'drained', detail: 'drained by user' });
    expect(isAlive(pid)).toBe(false);
    expect(coordinator.reportsOf('exited')[0]?.requested).toBe(true);
    expect(coordinator.leaves).toEqual([{ workerId: 7, incarnation: 1, reason: 'drained by user' }]);
    const beats = coordinator.heartbeats.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(coordinator.heartbeats.length).toBe(beats);
  });

  it('stop() ends training and leaves with the reason', async () => {
    makeAgent();
    await agent!.start();
    coordinator.give({ kind: 'start', plan: shellPlan('trap "" TERM; sleep 60') });
    const pid = await startedPid();
    await agent!.stop('user pressed Ctrl-C');
    expect(isAlive(pid)).toBe(false);
    expect(coordinator.leaves).toEqual([{ workerId: 7, incarnation: 1, reason: 'user pressed Ctrl-C' }]);
    expect(await agent!.exited).toEqual({ reason: 'stopped', detail: 'user pressed Ctrl-C' });
    expect(agent!.status().phase).toBe('stopped');
  });

  it('reports a command that cannot start as an exit, and carries on', async () => {
    makeAgent();
    await agent!.start();
    // torchrun, but this worker has no Python with torch.
    coordinator.give({ kind: 'start', plan: shellPlan('true', { launcher: 'torchrun', command: ['train.py'] }) });
    const exited = await waitFor('the exit report', () => coordinator.reportsOf('exited')[0]);
    expect(exited).toMatchObject({ exitCode: 127, requested: false });
    expect(coordinator.output()).toMatch(/torchrun needs a Python interpreter with PyTorch.*GPU_SHARE_PYTHON/);
    expect(agent!.status().phase).toBe('joined');
  });

  it('probes GPU residency at the first progress line of a GPU run, with the launcher pid, and reports it', async () => {
    const probes: ProbeResidencyOptions[] = [];
    makeAgent({
      probeResidency: async (o): Promise<ResidencyResult> => {
        probes.push(o);
        return { status: 'pass', detail: `GPU resident: pid ${o.pid} holds 812 MiB`, pid: o.pid, usedMib: 812 };
      },
    });
    await agent!.start();
    coordinator.give({
      kind: 'start',
      plan: shellPlan('echo "cuda=[$CUDA_VISIBLE_DEVICES]"; sleep 0.3; echo "GPU_SHARE_PROGRESS {\\"step\\":0}"; sleep 60', { useGpus: true }),
    });
    const pid = await startedPid();
    const verdict = await waitFor('a residency report', () => coordinator.reportsOf('residency')[0]);
    expect(verdict).toEqual({ type: 'residency', runId: 'run-1', generation: 0, status: 'pass', detail: `GPU resident: pid ${pid} holds 812 MiB`, pid, usedMib: 812 });
    expect(probes).toHaveLength(1);
    expect(probes[0]!.pid).toBe(pid);
    expect(coordinator.output()).toContain('cuda=[GPU-11111111-2222-3333-4444-555555555555]');
  });

  it('probes residency after the window even when the trainer prints no progress', async () => {
    let probedAt = 0;
    makeAgent({
      residencyStartWindowMs: 300,
      probeResidency: async (o) => {
        probedAt = Date.now();
        return { status: 'fail', detail: `NOT on the GPU: pid ${o.pid} not listed by nvidia-smi (no process is)`, pid: o.pid, usedMib: null };
      },
    });
    await agent!.start();
    const startedAt = Date.now();
    coordinator.give({ kind: 'start', plan: shellPlan('sleep 60', { useGpus: true }) });
    await startedPid();
    const verdict = await waitFor('a residency report', () => coordinator.reportsOf('residency')[0]);
    expect(verdict.status).toBe('fail');
    expect(probedAt - startedAt).toBeGreaterThanOrEqual(250);
  });

  it('a CPU run gets no residency probe', async () => {
    let probed = false;
    makeAgent({
      residencyStartWindowMs: 100,
      probeResidency: async (o) => {
        probed = true;
        return { status: 'pass', detail: '', pid: o.pid, usedMib: 1 };
      },
    });
    await agent!.start();
    coordinator.give({ kind: 'start', plan: shellPlan('echo "GPU_SHARE_PROGRESS {\\"step\\":0}"; sleep 0.4') });
    await waitFor('the exit', () => coordinator.reportsOf('exited')[0]);
    expect(probed).toBe(false);
  });

  it('stop() during start() gives the seat back instead of starting to work', async () => {
    const a = makeAgent();
    const starting = a.start();
    await a.stop('the app is shutting down');
    const joined = await starting;
    expect(coordinator.leaves).toEqual([{ workerId: joined.workerId, incarnation: joined.incarnation, reason: 'stopped while joining' }]);
    await new Promise((r) => setTimeout(r, 200));
    expect(coordinator.heartbeats).toHaveLength(0);
    expect(a.status().phase).toBe('stopped');
  });
});
