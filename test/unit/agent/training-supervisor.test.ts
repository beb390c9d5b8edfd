// The training supervisor on an in-memory pty and a fake clock: what it reports, how it stops, when it probes.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TrainingSupervisor, type TrainingSupervisorOptions } from '../../../src-main/agent/training-supervisor';
import type { ProbeResidencyOptions } from '../../../src-main/platform/hardware/residency';
import type { ProcessExit } from '../../../src-main/platform/runs/training-process';
import type { Report } from '../../../src-shared/worker-protocol';
import { FakeClock } from '../coordinator/fake-clock';
import { hardware, shellPlan } from './agent-fixtures';
import { FakePtySpawner, settle } from './fake-pty';

let dataDir: string;
let clock: FakeClock;
let pty: FakePtySpawner;
let reports: { report: Report; epoch: number }[];
let exits: { run: { runId: string; generation: number; epoch: number }; exit: ProcessExit; requested: boolean }[];
let logs: string[];
let probes: ProbeResidencyOptions[];

beforeEach(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'gpu-share-supervisor-'));
  clock = new FakeClock();
  pty = new FakePtySpawner();
  reports = [];
  exits = [];
  logs = [];
  probes = [];
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

function supervisor(extra: Partial<TrainingSupervisorOptions> = {}): TrainingSupervisor {
  return new TrainingSupervisor({
    pty,
    clock,
    log: (line) => logs.push(line),
    dataDir,
    workDir: dataDir,
    env: { PATH: '/usr/bin:/bin', GPU_SHARE_JOIN_TOKEN: 'secret' },
    python: () => null,
    gpus: () => hardware.gpus.filter((g) => g.vendor === 'nvidia'),
    node: () => 'alpha',
    stopGraceMs: 3000,
    residencyStartWindowMs: 5000,
    probeResidency: async (o) => {
      probes.push(o);
      return { status: 'pass', detail: `GPU resident: pid ${o.pid}`, pid: o.pid, usedMib: 800 };
    },
    report: (report, epoch) => reports.push({ report, epoch }),
    onExit: (run, exit, requested) => exits.push({ run, exit, requested }),
    ...extra,
  });
}

const progressLine = (rank: number, step: number, sps: number) => `GPU_SHARE_PROGRESS {"step":${step},"loss":0.5,"samples_per_sec":${sps},"rank":${rank}}\n`;

describe('TrainingSupervisor', () => {
  it('starts a plan in the pty with the filtered env, tags every report with its session, and passes the exit on', async () => {
    const s = supervisor();
    s.launch(shellPlan('echo hi'), 3);
    const proc = pty.last;
    expect([proc.file, ...proc.args]).toEqual(['/bin/sh', '-c', 'echo hi']);
    expect(proc.options.env.GPU_SHARE_CHECKPOINT_DIR).toBe(path.join(dataDir, 'checkpoints', 'run-1'));
    expect(proc.options.env.GPU_SHARE_JOIN_TOKEN).toBeUndefined();
    expect(s.statuses()).toEqual([{ runId: 'run-1', generation: 0, pid: proc.pid }]);
    proc.write('hello\r\n');
    proc.exit(0);
    await settle();
    expect(reports).toEqual([
      { report: { type: 'started', runId: 'run-1', generation: 0, pid: proc.pid }, epoch: 3 },
      { report: { type: 'output', runId: 'run-1', generation: 0, data: 'hello\r\n', progressSent: true }, epoch: 3 },
    ]);
    expect(exits).toEqual([{ run: { runId: 'run-1', generation: 0, epoch: 3 }, exit: { exitCode: 0, signal: null }, requested: false }]);
    expect(s.statuses()).toEqual([]);
  });

  it('writes a changed local-SGD period to the file GPU_SHARE_COMM_CONTROL names, whole; another generation\'s change is ignored', () => {
    const s = supervisor();
    s.launch(shellPlan('sleep 100'), 3);
    const file = pty.last.options.env.GPU_SHARE_COMM_CONTROL!;
    expect(file).toBe(path.join(dataDir, 'control', 'run-1', 'g0', 'comm-control.json'));
    expect(existsSync(file)).toBe(false);
    const update = { kind: 'comm-update' as const, runId: 'run-1', generation: 0, seq: 1, strategy: 'local-sgd' as const, localSgdPeriod: 77, reason: 'the link slowed' };
    expect(s.commUpdate(update)).toBe('run run-1 generation 0: local-sgd every 77 steps from the next average (the link slowed)');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ generation: 0, seq: 1, strategy: 'local-sgd', local_sgd_period: 77 });
    expect(readdirSync(path.dirname(file))).toEqual(['comm-control.json']); // renamed into place, no temp file left
    expect(s.commUpdate({ ...update, generation: 1, seq: 2, localSgdPeriod: 9 })).toMatch(/ignored: that generation is not running here/);
    expect(JSON.parse(readFileSync(file, 'utf8')).local_sgd_period).toBe(77);
  });

  it('sends every progress line parsed, as a progress report (null fields left out), and marks its output as sent so', () => {
    const s = supervisor();
    s.launch(shellPlan('true'), 2);
    pty.last.write('[default0]:GPU_SHARE_PROGRESS {"step":0,"loss":2.5,"rank":0,"grad_bytes":4096,"compute_s":0.01,"comm":"fp16"}\r\nnoise\r\n');
    pty.last.write(progressLine(0, 1, 10));
    const progress = reports.filter((r) => r.report.type === 'progress');
    expect(progress).toEqual([
      { report: { type: 'progress', runId: 'run-1', generation: 0, points: [{ step: 0, loss: 2.5, rank: 0, gradBytes: 4096, stepComputeS: 0.01, comm: 'fp16' }] }, epoch: 2 },
      { report: { type: 'progress', runId: 'run-1', generation: 0, points: [{ step: 1, loss: 0.5, samplesPerSec: 10, rank: 0 }] }, epoch: 2 },
    ]);
    const output = reports.filter((r) => r.report.type === 'output');
    expect(output.map((r) => r.report)).toEqual([
      expect.objectContaining({ progressSent: true, data: expect.stringContaining('"grad_bytes":4096') }),
      expect.objectContaining({ progressSent: true, data: progressLine(0, 1, 10) }),
    ]);
  });

  it('sums samples/s over the local ranks for the node’s progress', () => {
    const s = supervisor();
    s.launch(shellPlan('true', { nprocPerNode: 2 }), 1);
    pty.last.write(progressLine(0, 4, 10));
    pty.last.write(progressLine(1, 4, 12.5));
    expect(s.runProgress()).toEqual([{ runId: 'run-1', generation: 0, step: 4, loss: 0.5, samplesPerSec: 22.5, resumedFrom: null, totalSteps: null }]);
  });

  it('passes the trainer’s total_steps on with the heartbeat’s progress', () => {
    const s = supervisor();
    s.launch(shellPlan('true'), 1);
    pty.last.write('GPU_SHARE_PROGRESS {"step":10,"total_steps":400,"loss":0.5,"rank":0}\n');
    expect(s.beat().progress).toMatchObject({ step: 10, totalSteps: 400 });
  });

  it("heartbeats each run's progress and, as `progress`, the run that reported last; an ended run after its exit's beat in neither", async () => {
    const atExit: ReturnType<TrainingSupervisor['beat']>[] = [];
    const s: TrainingSupervisor = supervisor({ onExit: () => atExit.push(s.beat()) });
    s.launch(shellPlan('a', { runId: 'run-a' }), 1);
    const a = pty.last;
    s.launch(shellPlan('b', { runId: 'run-b' }), 1);
    const b = pty.last;
    expect(s.beat()).toEqual({ progress: null });
    b.write(progressLine(0, 7, 2));
    a.write(progressLine(0, 3, 1));
    expect(s.beat().progress).toMatchObject({ runId: 'run-a', step: 3 });
    expect(s.beat().runs!.map((p) => [p.runId, p.step])).toEqual([['run-b', 7], ['run-a', 3]]);
    a.exit(0);
    await settle();
    // The agent's final beat (sent from onExit) still carries the ended run's last step; the next ones do not.
    expect(atExit[0]!.runs!.map((p) => p.runId)).toEqual(['run-b', 'run-a']);
    expect(s.beat()).toEqual({ progress: expect.objectContaining({ runId: 'run-b', step: 7 }) });
    b.exit(0);
    await settle();
    expect(s.beat()).toEqual({ progress: null });
    expect(s.runProgress()).toEqual([]);
  });

  it('stop() sends SIGTERM, then SIGKILL once the grace has passed on the clock, and the exit counts as requested', async () => {
    const s = supervisor();
    s.launch(shellPlan('trap "" TERM; sleep 60'), 1);
    const proc = pty.last;
    proc.ignoreTerm = true;
    const stopped = s.stop('stopped by user');
    expect(proc.signals).toEqual(['SIGTERM']);
    clock.advance(2999);
    expect(proc.signals).toEqual(['SIGTERM']);
    clock.advance(1);
    await stopped;
    expect(proc.signals.slice(0, 2)).toEqual(['SIGTERM', 'SIGKILL']);
    await settle();
    expect(exits[0]).toMatchObject({ exit: { exitCode: null, signal: 9 }, requested: true });
    expect(logs).toContain('run run-1 generation 0 killed by signal 9 (stopped as asked)');
  });

  it('abandon() (the coordinator is lost) stops training without calling it requested', async () => {
    const s = supervisor();
    s.launch(shellPlan('sleep 60'), 1);
    s.abandon();
    await s.gone();
    await settle();
    expect(exits[0]!.requested).toBe(false);
  });

  it("a GPU run's CUDA_VISIBLE_DEVICES are the GPUs its launch plan gives the member (all of them when the plan names none)", () => {
    const two = [
      { ...hardware.gpus.find((g) => g.vendor === 'nvidia')!, index: 0, uuid: 'GPU-aaaa' },
      { ...hardware.gpus.find((g) => g.vendor === 'nvidia')!, index: 1, uuid: 'GPU-bbbb' },
    ];
    const s = supervisor({ gpus: () => two });
    s.launch({ ...shellPlan('train', { useGpus: true }), gpuIndices: [1] }, 1);
    expect(pty.last.options.env.CUDA_VISIBLE_DEVICES).toBe('GPU-bbbb');
    const older = supervisor({ gpus: () => two });
    older.launch(shellPlan('train', { useGpus: true }), 1);
    expect(pty.last.options.env.CUDA_VISIBLE_DEVICES).toBe('GPU-aaaa,GPU-bbbb');
  });

  it('probes residency at the first progress line of a GPU run, once, and not again at the window', async () => {
    const s = supervisor();
    s.launch(shellPlan('train', { useGpus: true }), 2);
    const proc = pty.last;
    expect(proc.options.env.CUDA_VISIBLE_DEVICES).toBe('GPU-11111111-2222-3333-4444-555555555555');
    proc.write(progressLine(0, 0, 1));
    proc.write(progressLine(0, 1, 1));
    await settle();
    clock.advance(10_000);
    await settle();
    expect(probes.map((p) => p.pid)).toEqual([proc.pid]);
    expect(reports.filter((r) => r.report.type === 'residency')).toEqual([
      { report: { type: 'residency', runId: 'run-1', generation: 0, status: 'pass', detail: `GPU resident: pid ${proc.pid}`, pid: proc.pid, usedMib: 800 }, epoch: 2 },
    ]);
  });

  it('probes residency when the window passes without a progress line; a CPU run is never probed', async () => {
    const s = supervisor();
    s.launch(shellPlan('train', { useGpus: true }), 1);
    clock.advance(4999);
    await settle();
    expect(probes).toHaveLength(0);
    clock.advance(1);
    await settle();
    expect(probes).toHaveLength(1);
    pty.last.exit(0);
    await settle();
    s.launch(shellPlan('cpu', { generation: 1 }), 1);
    pty.last.write(progressLine(0, 0, 1));
    clock.advance(10_000);
    await settle();
    expect(probes).toHaveLength(1);
  });

  it('a plan that cannot start is reported as output and an exit with code 127, and nothing is left running', () => {
    const s = supervisor();
    s.launch(shellPlan('true', { launcher: 'torchrun', command: ['train.py'] }), 5);
    expect(pty.spawned).toHaveLength(0);
    expect(reports.map((r) => [r.report.type, r.epoch])).toEqual([['output', 5], ['exited', 5]]);
    expect(reports[0]!.report).toMatchObject({ data: expect.stringMatching(/^gpu-share worker alpha: .*torchrun needs a Python interpreter with PyTorch/) });
    expect(reports[1]!.report).toMatchObject({ exitCode: 127, signal: null, requested: false });
    expect(s.statuses()).toEqual([]);
  });

  it('knows which start is a repeat and which stop applies to what runs now', () => {
    const s = supervisor();
    s.launch(shellPlan('sleep 60', { generation: 2 }), 1);
    expect(s.isRunning({ runId: 'run-1', generation: 2 })).toBe(true);
    expect(s.isRunning({ runId: 'run-1', generation: 3 })).toBe(false);
    expect(s.isStoppable('run-1', 2)).toBe(true);
    expect(s.isStoppable('run-1', 1)).toBe(false); // a stop for an older generation does not stop the newer one
    expect(s.isStoppable('run-2', 9)).toBe(false);
  });
});
