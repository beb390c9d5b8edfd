/**
 * Local SGD's drift measured on real torch (issue 24, item 3): two torchrun agents of one rank each (two
 * "machines", so no gradient is shared between them), gloo on loopback, training test/integration/drift_check.py
 * through gpu_share_comm.wrap with each rank on its own data. Each average reports the drift it removed, > 0 once
 * the members trained apart for a period; right after an average the members hold one model (drift ≈ 0); the
 * post-local-SGD warm-up averages every step before the period applies.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../src-main/agent/coordinator-client';
import { describeNoPython, findPythonDetailed, type PythonWithTorch } from '../../src-main/platform/runs/python-finder';

const SCRIPT = path.resolve('test/integration/drift_check.py');
let python: PythonWithTorch;

beforeAll(async () => {
  const found = await findPythonDetailed();
  if (!found.found) throw new Error(`these tests need PyTorch: ${describeNoPython(found)}`);
  python = found.found;
});

interface DriftResult {
  reports: { step: number; drift: number; drift_steps: number }[];
  mid: number;
  after: number;
}

/** One torchrun agent (one rank) of a two-node group on loopback; resolves to its output (killed after 120 s). */
function agent(port: number, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const argv = ['-m', 'torch.distributed.run', '--nnodes', '2', '--nproc_per_node', '1', '--rdzv_backend=c10d', `--rdzv_endpoint=127.0.0.1:${port}`, `--rdzv_id=drift-${port}`, '--redirects=1', '--tee=1', SCRIPT];
  const child = spawn(python.path, argv, { env: { ...process.env, GPU_SHARE_COMM: 'local-sgd', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) => child.on('close', (code) => (clearTimeout(timer), resolve({ code, output }))));
}

async function train(env: Record<string, string>): Promise<DriftResult> {
  const port = await findFreePort();
  const [a, b] = await Promise.all([agent(port, env), agent(port, env)]);
  for (const f of [a, b]) expect(f.code, f.output.slice(-3000)).toBe(0);
  const line = [a.output, b.output].join('\n').split('\n').find((l) => l.includes('DRIFT {'));
  expect(line, a.output.slice(-2000)).toBeDefined();
  return JSON.parse(line!.slice(line!.indexOf('{'))) as DriftResult;
}

describe('local SGD reports its members\' drift (real torch, gloo)', () => {
  it('period 4: each average reports drift > 0 grown over 4 steps; mid-period > 0; right after the last average ≈ 0', async () => {
    const r = await train({ GPU_SHARE_LOCAL_SGD_PERIOD: '4' });
    expect(r.reports.map((p) => [p.step, p.drift_steps])).toEqual([[4, 4], [8, 4], [12, 4]]);
    for (const p of r.reports) expect(p.drift).toBeGreaterThan(1e-3);
    expect(r.mid).toBeGreaterThan(1e-3); // step 10: two steps after an average
    expect(r.after).toBeLessThan(1e-6);
  }, 150_000);

  it('warm-up 4 at period 4: averages after steps 1-4, then every 4', async () => {
    const r = await train({ GPU_SHARE_LOCAL_SGD_PERIOD: '4', GPU_SHARE_LOCAL_SGD_WARMUP: '4' });
    expect(r.reports.map((p) => [p.step, p.drift_steps])).toEqual([[1, 1], [2, 1], [3, 1], [4, 1], [8, 4], [12, 4]]);
    for (const p of r.reports) expect(p.drift).toBeGreaterThan(0);
    expect(r.after).toBeLessThan(1e-6);
  }, 150_000);
});
