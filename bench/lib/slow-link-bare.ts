/**
 * The baseline of bench/slow-link.ts: the example trainer under bare torchrun (no app) on two namespace hosts,
 * one rank each, so what a shaped cable costs each communication strategy is measured without anything of GPU
 * Share in the way. It is also the check of the coordinator's model (comm-choice.ts): the trainer reports its
 * gradient bytes and compute time, and the measured step time shows how much the link really added.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TrainerProgressLine } from '../../src-main/platform/runs/progress-line';
import { TORCH_PYTHON } from '../../test/integration/helpers/agent-handle';
import { HOST_DEV, type Cluster } from '../../test/multihost/helpers/hosts';
import { assetsDir } from '../../test/multihost/helpers/paths';
import { ProgressStream, steadyStepRate } from './progress-stream';

export interface TrainerRun {
  /** Rank 0's steady steps per second (the first 20 % and last 5 % of steps left out). */
  stepsPerSec: number;
  /** Mean loss of rank 0's last 10 steps: every run of a table sees the same samples, so these compare. */
  finalLoss: number | null;
  /** What the trainer reported in its first lines (null when it does not report them). */
  gradBytes: number | null;
  computeS: number | null;
  /** The strategy the trainer says it ran (it may refuse one and fall back). */
  comm: string | null;
  wallS: number;
}

export interface BareOptions {
  /** Host names: the first hosts torch's store. */
  hosts: [string, string];
  trainerArgv: string[];
  batch: number;
  /** GPU_SHARE_COMM and, for local-sgd, GPU_SHARE_LOCAL_SGD_PERIOD. */
  comm: string;
  localSgdPeriod?: number;
  port: number;
  rdzvId: string;
  timeoutMs: number;
}

/** Rank 0's summary out of its progress lines (shared with the app side of the bench). */
export function summarizeRun(lines: readonly TrainerProgressLine[], batch: number, wallS: number): TrainerRun | null {
  const stamped = lines.map((line) => ({ at: 0, line }));
  const rate = steadyStepRate(stamped, batch);
  if (!rate) return null;
  const mine = lines.filter((l) => (l.rank ?? 0) === 0);
  const losses = mine.slice(-10).map((l) => l.loss).filter((l): l is number => l !== null);
  const first = mine.find((l) => l.gradBytes !== null);
  return {
    stepsPerSec: rate.stepsPerSec,
    finalLoss: losses.length > 0 ? losses.reduce((a, b) => a + b, 0) / losses.length : null,
    gradBytes: first?.gradBytes ?? null,
    computeS: first?.stepComputeS ?? null,
    comm: mine.find((l) => l.comm !== null)?.comm ?? null,
    wallS,
  };
}

/** One bare torchrun run over the two hosts; throws with each host's last lines when it does not finish. */
export async function bareRun(cluster: Cluster, opts: BareOptions): Promise<TrainerRun> {
  const store = cluster.host(opts.hosts[0]);
  const checkpoints = mkdtempSync(path.join(tmpdir(), 'gsmh-slow-link-'));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, PYTHONUNBUFFERED: '1', OMP_NUM_THREADS: '1', GPU_SHARE_COMM: opts.comm };
  if (opts.comm === 'local-sgd') env.GPU_SHARE_LOCAL_SGD_PERIOD = String(opts.localSgdPeriod ?? 8);
  const began = performance.now();
  const procs = opts.hosts.map((name, i) => {
    const host = cluster.host(name);
    const argv = [
      // The app's launcher shim: torch would otherwise publish the host name, which no other host resolves.
      TORCH_PYTHON, path.join(assetsDir, 'launcher', 'torchrun_shim.py'),
      '--nnodes=2', '--nproc_per_node=1', '--rdzv_backend=c10d',
      `--rdzv_endpoint=${store.address}:${opts.port}`, `--rdzv_id=${opts.rdzvId}`,
      // torch 1.x needs an explicit redirect (torchrun-command.ts, needsRedirectWorkaround); tee keeps stdout.
      `--rdzv_conf=is_host=${i === 0 ? 1 : 0}`, '--max_restarts=0', '--redirects=1', '--tee=1',
      ...opts.trainerArgv,
    ];
    // As the agent does (launch-network-env.ts): gloo binds the interface that holds the published address.
    const own = { GLOO_SOCKET_IFNAME: HOST_DEV, GPU_SHARE_LOCAL_ADDR: host.address, GPU_SHARE_NODE_RANK: String(i), GPU_SHARE_CHECKPOINT_DIR: path.join(checkpoints, name) };
    return host.spawn(argv, { env: { ...env, ...own }, label: `${name}:torchrun` });
  });
  try {
    let timer: NodeJS.Timeout | undefined;
    const exits = await Promise.race([
      Promise.all(procs.map((p) => p.exited)),
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), opts.timeoutMs))),
    ]).finally(() => clearTimeout(timer));
    const tails = () => procs.map((p) => `${p.label}:\n${p.tail(8)}`).join('\n');
    if (!exits) throw new Error(`bare torchrun (${opts.comm}) did not finish in ${opts.timeoutMs} ms\n${tails()}`);
    if (exits.some((e) => e.code !== 0)) throw new Error(`bare torchrun (${opts.comm}) exited ${JSON.stringify(exits)}\n${tails()}`);
    const stream = new ProgressStream();
    for (const p of procs) stream.push(p.lines.map((l) => l.text).join('\n') + '\n');
    const run = summarizeRun(stream.lines.map((s) => s.line), opts.batch, (performance.now() - began) / 1000);
    if (!run) throw new Error(`bare torchrun (${opts.comm}): too few progress lines from rank 0\n${tails()}`);
    return run;
  } finally {
    await Promise.all(procs.map((p) => p.stop(5_000)));
    rmSync(checkpoints, { recursive: true, force: true });
  }
}
