/**
 * The example trainer with every communication strategy (GPU_SHARE_COMM), on the real engine: torch's elastic
 * launcher through the launcher shim, gloo on CPU, two ranks on loopback. Proves each strategy trains to the
 * end with a falling loss and reports what the coordinator chooses from (grad_bytes, compute_s, comm in the
 * first progress lines of each start; comm_s, what communication measurably cost, after the first three steps
 * and every 20th for ddp/fp16, after every average for local-sgd), that PowerSGD on gloo falls back to fp16 saying why, that bad values
 * train with ddp saying what to fix, that --hidden/--layers change the gradient bytes, that local SGD ends
 * with one model on every node, and that GPU_SHARE_NODE_RANK orders the group ranks.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../src-main/agent/coordinator-client';
import { buildTrainingEnv } from '../../src-main/platform/runs/child-env';
import { parseProgressLine, type TrainerProgressLine } from '../../src-main/platform/runs/progress-line';
import { describeNoPython, findPythonDetailed, type PythonWithTorch } from '../../src-main/platform/runs/python-finder';
import { buildTorchrunArgv } from '../../src-main/platform/runs/torchrun-command';
import type { LaunchPlan } from '../../src-shared/worker-protocol';

const TRAINER = path.resolve('assets/trainers/ddp_example.py');
const STATS_LINES = 3;
let python: PythonWithTorch;
let work: string;

beforeAll(async () => {
  const found = await findPythonDetailed();
  if (!found.found) throw new Error(`these tests need PyTorch: ${describeNoPython(found)}`);
  python = found.found;
  work = mkdtempSync(path.join(tmpdir(), 'gpu-share-comm-'));
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

interface Finished {
  code: number | null;
  output: string;
  progress: TrainerProgressLine[];
}

interface LaunchOpts {
  args: string[];
  /** The training script; ddp_example.py when left out. */
  trainer?: string;
  env?: Record<string, string>;
  name: string;
  nnodes?: string;
  nproc?: number;
  endpoint?: string;
  rdzvId?: string;
  isHost?: boolean;
}

/** One torchrun agent with the argv the app builds, run to its end (killed after 150 s). */
async function run(opts: LaunchOpts): Promise<Finished> {
  const plan: LaunchPlan = {
    runId: 'comm',
    generation: 0,
    launcher: 'torchrun',
    command: [opts.trainer ?? TRAINER, ...opts.args],
    nnodes: opts.nnodes ?? '1:1',
    nprocPerNode: opts.nproc ?? 2,
    rdzvEndpoint: opts.endpoint ?? `127.0.0.1:${await findFreePort()}`,
    rdzvId: opts.rdzvId ?? `comm-${opts.name}`,
    maxRestarts: 0,
    env: { GPU_SHARE_SAMPLES: '1024', GPU_SHARE_LOCAL_ADDR: '127.0.0.1', ...opts.env },
    useGpus: false,
    localAddr: '127.0.0.1',
    rdzvHost: opts.isHost ?? true,
  };
  const argv = buildTorchrunArgv(plan, python, { logDir: path.join(work, opts.name, 'logs') });
  const env = buildTrainingEnv({ inherited: process.env, planEnv: plan.env, checkpointDir: path.join(work, opts.name, 'ckpt'), gpuUuids: [] });
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(timer);
  const progress = output.split('\n').map(parseProgressLine).filter((p): p is TrainerProgressLine => p !== null);
  return { code, output, progress };
}

/** "<step a> <step b> <True|False>": the two runs' last checkpoints, and whether they hold the same model. */
function lastCheckpoints(a: string, b: string): string {
  return execFileSync(python.path, ['-c', [
    'import sys, torch',
    'a, b = (torch.load(p, map_location="cpu") for p in sys.argv[1:3])',
    'print(a["step"], b["step"], all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"]))',
  ].join('\n'), path.join(work, a, 'ckpt', 'ddp_example.pt'), path.join(work, b, 'ckpt', 'ddp_example.pt')]).toString().trim();
}

function byRank(progress: TrainerProgressLine[], rank: number): TrainerProgressLine[] {
  return progress.filter((p) => p.rank === rank).sort((a, b) => a.step - b.step);
}

/**
 * Every rank ran every step, exactly its first STATS_LINES lines carry the figures, and (from step 0, where the
 * loss still falls clearly above its noise) its loss fell.
 */
function expectTrainedWithStats(f: Finished, opts: { comm: string; gradBytes: number; powersgdBytes?: number; steps: number; ranks: number[]; from?: number; period?: number }): void {
  const from = opts.from ?? 0;
  expect(f.code, f.output.slice(-3000)).toBe(0);
  for (const rank of opts.ranks) {
    const mine = byRank(f.progress, rank);
    expect(mine.map((p) => p.step)).toEqual(Array.from({ length: opts.steps - from }, (_, i) => from + i));
    const first = mine.slice(0, STATS_LINES);
    for (const p of first) {
      expect(p.comm).toBe(opts.comm);
      expect(p.gradBytes).toBe(opts.gradBytes);
      if (opts.powersgdBytes !== undefined) expect(p.powersgdBytes).toBe(opts.powersgdBytes);
      expect(p.stepComputeS).toBeGreaterThan(0);
      expect(p.stepComputeS).toBeLessThan(5);
    }
    expect(mine.slice(STATS_LINES).every((p) => p.gradBytes === null && (p.comm === null) === (p.commS === null))).toBe(true);
    // comm_s: local-sgd after each average (1-based step a multiple of the period), else from+1..3 and every 20th.
    const measuredAt = mine.filter((p) => p.commS !== null).map((p) => p.step);
    const expected = opts.period
      ? mine.map((p) => p.step).filter((s) => (s + 1) % opts.period! === 0)
      : mine.map((p) => p.step).filter((s) => (s - from >= 1 && s - from <= 3) || (s - from > 0 && (s - from) % 20 === 0));
    expect(measuredAt, `rank ${rank}`).toEqual(expected);
    for (const p of mine.filter((q) => q.commS !== null)) {
      expect(p.comm).toBe(opts.comm);
      expect(p.commS!).toBeGreaterThanOrEqual(0);
      expect(p.commS!).toBeLessThan(5);
    }
    if (opts.period) expect(mine.filter((p) => p.commS !== null).every((p) => p.commS! > 0)).toBe(true);
    if (from > 0) continue;
    const losses = mine.map((p) => p.loss!);
    const early = losses.slice(0, 5).reduce((s, l) => s + l, 0);
    const late = losses.slice(-5).reduce((s, l) => s + l, 0);
    expect(late, `rank ${rank} losses ${losses.join(' ')}`).toBeLessThan(early);
  }
}

// 4 * ((16 + 1) * 64 + 64 + 1): the default MLP, 16 features -> 64 -> 1.
const DEFAULT_GRAD_BYTES = 4612;
// 4 * ((16 + 1) * 128 + (128 + 1) * 128 + 128 + 1) for --hidden 128 --layers 2.
const WIDE_GRAD_BYTES = 75_268;
// PowerSGD (rank 1) by torch's rule — compressed when (rows + rest) * 2 < rows * rest: 128x16 -> 144 and
// 128x128 -> 256 elements; the biases (128, 128, 1) and the 1x128 output layer go whole: 4 * 785.
const WIDE_POWERSGD_BYTES = 3140;
const SHORT = ['--steps', '30', '--batch', '16', '--checkpoint-every', '10'];

describe('communication strategies in ddp_example.py (torchrun, gloo, CPU, two ranks)', () => {
  it('ddp with --hidden 128 --layers 2: trains, reports 75268 gradient bytes; a restart reports them again', async () => {
    const first = await run({ name: 'ddp-wide', args: ['--hidden', '128', '--layers', '2', ...SHORT], env: { GPU_SHARE_COMM: 'ddp' } });
    expectTrainedWithStats(first, { comm: 'ddp', gradBytes: WIDE_GRAD_BYTES, powersgdBytes: WIDE_POWERSGD_BYTES, steps: 30, ranks: [0, 1] });
    expect(first.output).not.toContain('gpu-share comm:');
    // Same checkpoint folder, more steps: it resumes at 30 and the new start's first lines carry the figures.
    const again = await run({ name: 'ddp-wide', args: ['--hidden', '128', '--layers', '2', '--steps', '40', '--batch', '16', '--checkpoint-every', '10'] });
    expect(again.progress[0]!.resumedFrom).toBe(30);
    expectTrainedWithStats(again, { comm: 'ddp', gradBytes: WIDE_GRAD_BYTES, steps: 40, ranks: [0, 1], from: 30 });
  }, 300_000);

  it('fp16: trains with the fp16 compression hook and the default model size', async () => {
    const f = await run({ name: 'fp16', args: SHORT, env: { GPU_SHARE_COMM: 'fp16' } });
    expectTrainedWithStats(f, { comm: 'fp16', gradBytes: DEFAULT_GRAD_BYTES, steps: 30, ranks: [0, 1] });
  }, 200_000);

  it('powersgd on gloo under torch 1.x: says it needs NCCL or torch 2, names the version, and trains with fp16 instead', async () => {
    const version = execFileSync(python.path, ['-c', 'import torch; print(torch.__version__)']).toString().trim();
    // This machine's torch is 1.13: the fallback runs for real (torch 2's PowerSGD on gloo was checked on a device).
    expect(version).toMatch(/^1\./);
    const f = await run({ name: 'powersgd', args: SHORT, env: { GPU_SHARE_COMM: 'powersgd' } });
    expect(f.output).toContain(`gpu-share comm: powersgd needs NCCL or torch 2 or newer, but this run's process group uses gloo with torch ${version}`);
    expect(f.output).toContain('using fp16 compression instead');
    expectTrainedWithStats(f, { comm: 'fp16', gradBytes: DEFAULT_GRAD_BYTES, steps: 30, ranks: [0, 1] });
  }, 200_000);

  it('powersgd_on_gloo reads torch versions safely: 2 and newer yes, 1.x and unparseable no', () => {
    const answers = execFileSync(python.path, ['-c', [
      'import json, sys',
      'sys.path.insert(0, sys.argv[1])',
      'from gpu_share_comm import powersgd_on_gloo',
      'print(json.dumps([powersgd_on_gloo(v) for v in sys.argv[2:]]))',
    ].join('\n'), path.dirname(TRAINER), '2.11.0+cu130', '2.0.0', '10.1', ' 3.0a0', '1.13.1', '1.9.0+cpu', '', 'nightly', 'v2.1', '2']).toString().trim();
    expect(JSON.parse(answers)).toEqual([true, true, true, true, false, false, false, false, false, true]);
  });

  it('a bad strategy or a bad local-sgd period: a message naming the variable, and training with ddp', async () => {
    const [bogus, period] = await Promise.all([
      run({ name: 'bogus', args: SHORT, env: { GPU_SHARE_COMM: 'carrier-pigeon' } }),
      run({ name: 'bad-period', args: SHORT, env: { GPU_SHARE_COMM: 'local-sgd', GPU_SHARE_LOCAL_SGD_PERIOD: '100000' } }),
    ]);
    expect(bogus.output).toContain("gpu-share comm: GPU_SHARE_COMM='carrier-pigeon' is not one of ddp, fp16, powersgd, local-sgd");
    expectTrainedWithStats(bogus, { comm: 'ddp', gradBytes: DEFAULT_GRAD_BYTES, steps: 30, ranks: [0, 1] });
    expect(period.output).toContain('needs GPU_SHARE_LOCAL_SGD_PERIOD = steps between model averages, a whole number from 1 to 1000');
    expect(period.output).toContain("but it is '100000'; training with ddp");
    expectTrainedWithStats(period, { comm: 'ddp', gradBytes: DEFAULT_GRAD_BYTES, steps: 30, ranks: [0, 1] });
  }, 200_000);

  it('local-sgd across two nodes: trains, and both nodes end with the same, averaged model', async () => {
    const port = await findFreePort();
    const common = { args: ['--steps', '31', '--batch', '16', '--checkpoint-every', '10'], nnodes: '2:2', nproc: 1, endpoint: `127.0.0.1:${port}`, rdzvId: 'local-sgd' };
    const env = { GPU_SHARE_COMM: 'local-sgd', GPU_SHARE_LOCAL_SGD_PERIOD: '4' };
    const [a, b] = await Promise.all([run({ ...common, env, name: 'lsgd-a', isHost: true }), run({ ...common, env, name: 'lsgd-b', isHost: false })]);
    expect(a.output).toContain('local-sgd: no gradient exchange between machines; the model is averaged every 4 steps');
    expectTrainedWithStats(a, { comm: 'local-sgd', gradBytes: DEFAULT_GRAD_BYTES, steps: 31, ranks: [a.progress[0]!.rank!], period: 4 });
    expectTrainedWithStats(b, { comm: 'local-sgd', gradBytes: DEFAULT_GRAD_BYTES, steps: 31, ranks: [b.progress[0]!.rank!], period: 4 });
    // Each average's line says how far the members had drifted apart over the 4 steps (the example trainer unchanged).
    const averages = a.progress.filter((p) => p.commS != null);
    expect(averages.map((p) => p.driftSteps)).toEqual(averages.map(() => 4));
    for (const p of averages) expect(p.drift).toBeGreaterThan(0);
    // Between averages each node trains alone; the final step (31, not a multiple of 4) ends with one more
    // average, so the last checkpoints (written after it) hold the same model on both nodes.
    expect(lastCheckpoints('lsgd-a', 'lsgd-b')).toBe('31 31 True');
  }, 200_000);

  it('local-sgd period changed while training (GPU_SHARE_COMM_CONTROL): read by one node, agreed by both at the next average', async () => {
    const port = await findFreePort();
    const common = { args: ['--steps', '31', '--batch', '16', '--checkpoint-every', '10'], nnodes: '2:2', nproc: 1, endpoint: `127.0.0.1:${port}`, rdzvId: 'retune' };
    // Only node A's agent wrote the change (B's missed it): the ranks agree on the highest seq before each average.
    const control = path.join(work, 'retune-a.json');
    writeFileSync(control, JSON.stringify({ generation: 0, seq: 1, strategy: 'local-sgd', local_sgd_period: 2 }));
    const env = { GPU_SHARE_COMM: 'local-sgd', GPU_SHARE_LOCAL_SGD_PERIOD: '4' };
    const [a, b] = await Promise.all([
      run({ ...common, env: { ...env, GPU_SHARE_COMM_CONTROL: control }, name: 'retune-a', isHost: true }),
      run({ ...common, env: { ...env, GPU_SHARE_COMM_CONTROL: path.join(work, 'retune-b-missing.json') }, name: 'retune-b', isHost: false }),
    ]);
    for (const f of [a, b]) {
      expect(f.code, f.output.slice(-3000)).toBe(0);
      expect(f.output).toContain('local-sgd: averaging every 2 steps from now on (was 4; change 1 from the coordinator)');
      // Averages (comm_s) after 1-based step 4 at period 4, then every 2 steps: 6, 8, …, 30.
      const averagedAt = byRank(f.progress, f.progress[0]!.rank!).filter((p) => p.commS !== null).map((p) => p.step + 1);
      expect(averagedAt).toEqual([4, ...Array.from({ length: 13 }, (_, i) => 6 + 2 * i)]);
    }
    expect(lastCheckpoints('retune-a', 'retune-b')).toBe('31 31 True');
  }, 200_000);

  it('GPU_SHARE_NODE_RANK orders the group ranks: swapping the positions swaps the ranks', async () => {
    for (const [posA, posB] of [[1, 0], [0, 1]] as const) {
      const port = await findFreePort();
      const common = { args: ['--steps', '3', '--checkpoint-every', '0'], nnodes: '2:2', nproc: 1, endpoint: `127.0.0.1:${port}`, rdzvId: `order-${posA}` };
      // A starts first (and so has the lower pid, which is what torch sorts on when host names tie).
      const aDone = run({ ...common, name: `order-a-${posA}`, isHost: true, env: { GPU_SHARE_NODE_RANK: String(posA) } });
      await new Promise((r) => setTimeout(r, 300));
      const [a, b] = await Promise.all([aDone, run({ ...common, name: `order-b-${posA}`, isHost: false, env: { GPU_SHARE_NODE_RANK: String(posB) } })]);
      expect(a.code, a.output.slice(-3000)).toBe(0);
      expect(b.code, b.output.slice(-3000)).toBe(0);
      expect(a.output).toContain(`gpu-share launcher: this node sorts at ring position ${posA} (dynamic_rendezvous._NodeDesc order)`);
      expect(a.progress.every((p) => p.rank === posA && p.worldSize === 2)).toBe(true);
      expect(b.progress.every((p) => p.rank === posB && p.worldSize === 2)).toBe(true);
      expect(a.progress.length).toBe(3);
    }
  }, 300_000);

  it('a GPU_SHARE_NODE_RANK that is not a position is named and ignored', async () => {
    const f = await run({ name: 'bad-order', args: ['--steps', '2', '--checkpoint-every', '0'], nproc: 1, env: { GPU_SHARE_NODE_RANK: '-1' } });
    expect(f.code, f.output.slice(-3000)).toBe(0);
    expect(f.output).toContain("gpu-share launcher: GPU_SHARE_NODE_RANK='-1' is not a position from 0 to 99999: ignored");
  }, 100_000);

  it('tiny-gpt in DDP mode (tiny_gpt_ddp.py): two ranks train the language model with fp16, report its gradient bytes, and the loss falls', async () => {
    const f = await run({ trainer: path.resolve('assets/trainers/tiny_gpt_ddp.py'), args: ['--steps', '25', '--batch', '4', '--seq-len', '32', '--checkpoint-every', '10'], env: { GPU_SHARE_COMM: 'fp16' }, name: 'tiny-gpt' });
    // 298,240 bytes: tiny-gpt's 74,560 fp32 parameters (2 layers, width 48, 256 byte tokens, 128 positions).
    expectTrainedWithStats(f, { comm: 'fp16', gradBytes: 298_240, steps: 25, ranks: [0, 1] });
    expect(existsSync(path.join(work, 'tiny-gpt', 'ckpt', 'tiny_gpt_ddp.pt'))).toBe(true);
  }, 200_000);
});
