/**
 * The example trainer on the real engine: torch's elastic launcher (Debian's torch 1.13 here), gloo on CPU,
 * launched through the real pty with the argv the agent builds. Proves the torch 1.13 workaround, whole
 * progress lines from two ranks sharing one pty, checkpoints, and resuming after a kill.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../src-main/agent/coordinator-client';
import { nodePtySpawner } from '../../src-main/platform/pty/node-pty-spawner';
import { systemClock } from '../../src-main/platform/ports';
import { buildTrainingEnv } from '../../src-main/platform/runs/child-env';
import { PROGRESS_MARKER, type TrainerProgressLine } from '../../src-main/platform/runs/progress-line';
import { findPythonDetailed, describeNoPython, type PythonWithTorch } from '../../src-main/platform/runs/python-finder';
import { buildTorchrunArgv } from '../../src-main/platform/runs/torchrun-command';
import { TrainingProcess, type ProcessExit } from '../../src-main/platform/runs/training-process';
import type { LaunchPlan } from '../../src-shared/worker-protocol';
import { isAlive, waitFor } from '../unit/agent/fake-coordinator';

const TRAINER = path.resolve('assets/trainers/ddp_example.py');
let python: PythonWithTorch;
let work: string;
const procs: TrainingProcess[] = [];

beforeAll(async () => {
  const found = await findPythonDetailed();
  if (!found.found) throw new Error(`these tests need PyTorch: ${describeNoPython(found)}`);
  python = found.found;
});
afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => p.kill()));
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

interface Launched {
  proc: TrainingProcess;
  progress: TrainerProgressLine[];
  output: () => string;
  exit: Promise<ProcessExit>;
}

async function launch(opts: {
  args: string[];
  checkpointDir: string;
  nnodes?: string;
  nproc?: number;
  endpoint?: string;
  rdzvId?: string;
  isHost?: boolean;
  env?: Record<string, string>;
}): Promise<Launched> {
  const endpoint = opts.endpoint ?? `127.0.0.1:${await findFreePort()}`;
  const plan: LaunchPlan = {
    runId: 'itest',
    generation: 0,
    launcher: 'torchrun',
    command: [TRAINER, ...opts.args],
    nnodes: opts.nnodes ?? '1:1',
    nprocPerNode: opts.nproc ?? 2,
    rdzvEndpoint: endpoint,
    rdzvId: opts.rdzvId ?? `itest-${Math.random().toString(36).slice(2)}`,
    maxRestarts: 0,
    env: opts.env ?? {},
    useGpus: false,
    localAddr: '127.0.0.1',
    rdzvHost: opts.isHost ?? true,
  };
  const argv = buildTorchrunArgv(plan, python, { logDir: path.join(work, 'logs') });
  let output = '';
  const progress: TrainerProgressLine[] = [];
  const proc = new TrainingProcess({
    pty: nodePtySpawner,
    argv,
    env: buildTrainingEnv({ inherited: process.env, planEnv: plan.env, checkpointDir: opts.checkpointDir, gpuUuids: [] }),
    cwd: work,
    clock: systemClock,
    onOutput: (d) => (output += d),
    onProgress: (l) => progress.push(l),
  });
  procs.push(proc);
  return { proc, progress, output: () => output, exit: proc.exited };
}

describe('ddp_example.py under real torchrun (gloo, CPU)', () => {
  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'gpu-share-trainer-'));
  });

  it('two processes train to the end, every progress line whole, each rank on its own half of the node shard', async () => {
    const ckpt = path.join(work, 'ckpt-finish');
    const run = await launch({
      args: ['--steps', '30', '--batch', '16', '--checkpoint-every', '10'],
      checkpointDir: ckpt,
      env: { GPU_SHARE_SAMPLES: '1000', GPU_SHARE_SHARD_START: '100', GPU_SHARE_SHARD_END: '301' },
    });
    const exit = await run.exit;
    expect(exit, run.output().slice(-3000)).toEqual({ exitCode: 0, signal: null });
    // Every line that carries the marker parsed: none was cut or interleaved on the shared pty.
    const markerLines = run.output().split('\n').filter((l) => l.includes(PROGRESS_MARKER));
    expect(markerLines.length).toBe(60);
    expect(run.progress.length).toBe(60);
    for (const rank of [0, 1]) {
      const mine = run.progress.filter((p) => p.rank === rank);
      expect(mine.map((p) => p.step)).toEqual(Array.from({ length: 30 }, (_, i) => i));
      expect(mine.every((p) => p.worldSize === 2 && p.resumedFrom === 0 && p.loss !== null && p.samplesPerSec !== null)).toBe(true);
    }
    // Node shard [100, 301) split over two local ranks: the first gets the extra sample.
    expect(run.progress.find((p) => p.rank === 0)!.shard).toEqual([100, 201]);
    expect(run.progress.find((p) => p.rank === 1)!.shard).toEqual([201, 301]);
    // Loss falls: it really trains.
    const rank0 = run.progress.filter((p) => p.rank === 0);
    const early = rank0.slice(0, 5).reduce((s, p) => s + p.loss!, 0);
    const late = rank0.slice(-5).reduce((s, p) => s + p.loss!, 0);
    expect(late).toBeLessThan(early);
    expect(existsSync(path.join(ckpt, 'ddp_example.pt'))).toBe(true);
  });

  it('killed mid-run and started again, it resumes from its checkpoint instead of step 0', async () => {
    const ckpt = path.join(work, 'ckpt-resume');
    const args = ['--steps', '60', '--batch', '16', '--checkpoint-every', '5', '--step-sleep', '0.05'];
    const first = await launch({ args, checkpointDir: ckpt });
    await waitFor('step 20 on rank 0', () => first.progress.some((p) => p.rank === 0 && p.step >= 20), 90_000);
    const launcherPid = first.proc.pid;
    first.proc.kill();
    const killed = await first.exit;
    expect(killed.signal).toBe(9);
    await waitFor('the first launch to be gone', () => !isAlive(launcherPid), 5000);
    const reached = Math.max(...first.progress.map((p) => p.step));

    const second = await launch({ args, checkpointDir: ckpt });
    const exit = await second.exit;
    expect(exit, second.output().slice(-3000)).toEqual({ exitCode: 0, signal: null });
    const resumed = second.progress[0]!.resumedFrom!;
    expect(resumed).toBeGreaterThanOrEqual(15);
    expect(resumed).toBeLessThanOrEqual(reached + 1);
    expect(resumed % 5).toBe(0);
    for (const rank of [0, 1]) {
      const mine = second.progress.filter((p) => p.rank === rank);
      expect(mine[0]!.step).toBe(resumed);
      expect(mine.at(-1)!.step).toBe(59);
      expect(mine.every((p) => p.resumedFrom === resumed)).toBe(true);
    }
  });

  it('SIGTERM (a stop or drain) finishes the current step, checkpoints it and exits; the next start resumes there', async () => {
    const ckpt = path.join(work, 'ckpt-term');
    // No periodic checkpoint before step 1000: only the stop can have written one.
    const args = ['--steps', '40', '--batch', '16', '--checkpoint-every', '1000', '--step-sleep', '0.1'];
    const first = await launch({ args, checkpointDir: ckpt });
    await waitFor('step 8 on both ranks', () => [0, 1].every((r) => first.progress.some((p) => p.rank === r && p.step >= 8)), 90_000);
    await first.proc.stop(10_000);
    expect(first.output()).toMatch(/ddp_example: rank 0 stopping after step \d+ as asked \(SIGTERM\); checkpoint saved/);
    const last0 = Math.max(...first.progress.filter((p) => p.rank === 0).map((p) => p.step));
    expect(existsSync(path.join(ckpt, 'ddp_example.pt'))).toBe(true);

    const second = await launch({ args, checkpointDir: ckpt });
    expect((await second.exit).exitCode, second.output().slice(-3000)).toBe(0);
    expect(second.progress[0]!.resumedFrom).toBe(last0 + 1);
  });

  it('a node without a checkpoint catches up: the group resumes from the newest checkpoint any node holds', async () => {
    const dirA = path.join(work, 'node-a');
    const dirB = path.join(work, 'node-b');
    const seed = await launch({ args: ['--steps', '10', '--checkpoint-every', '5'], checkpointDir: dirA, nproc: 1 });
    expect((await seed.exit).exitCode).toBe(0);

    // Two "nodes" of one process each, as two agents would start them; only node A has a checkpoint.
    const port = await findFreePort();
    const common = { args: ['--steps', '16', '--checkpoint-every', '5'], nnodes: '2:2', nproc: 1, endpoint: `127.0.0.1:${port}`, rdzvId: 'catch-up' };
    const a = await launch({ ...common, checkpointDir: dirA, isHost: true });
    const b = await launch({ ...common, checkpointDir: dirB, isHost: false });
    const [ea, eb] = await Promise.all([a.exit, b.exit]);
    expect(ea, a.output().slice(-3000)).toEqual({ exitCode: 0, signal: null });
    expect(eb, b.output().slice(-3000)).toEqual({ exitCode: 0, signal: null });
    for (const node of [a, b]) {
      expect(node.progress[0]!.resumedFrom).toBe(10);
      expect(node.progress[0]!.step).toBe(10);
      expect(node.progress.at(-1)!.step).toBe(15);
      expect(node.progress[0]!.worldSize).toBe(2);
    }
    // Node B checkpoints from here on, so it could carry the run alone.
    expect(existsSync(path.join(dirB, 'ddp_example.pt'))).toBe(true);
  });
});
