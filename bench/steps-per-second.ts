/**
 * Training throughput through GPU Share versus the same torchrun command by hand (target ratio ≥ 0.98).
 *
 *   node scripts/run-ts.mjs bench/steps-per-second.ts [--steps 1500] [--rounds 3]
 *
 * (a) GPU Share: the coordinator (in this process) and ONE worker agent process with nprocPerNode 2, so the
 *     agent runs torchrun in its pty with 2 ranks (gloo on CPU), parses every line and streams all output to
 *     the coordinator, which this process receives as the app would.
 * (b) By hand: the exact argv that agent launched (taken from its log), with a fresh rendezvous port, id and
 *     log dir, as a plain child process; the same trainer arguments and a fresh checkpoint folder.
 * Rounds alternate a, b, a, b… so load from anything else on the machine hits both alike. Steps/s is rank 0's,
 * over the steady part (the first 20 % and last 5 % of steps left out), from the trainer's own step timings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { findFreePort } from '../src-main/agent/coordinator-client';
import { bundleAgent, findRepoRoot } from '../test/integration/helpers/agent-bundle';
import { AgentHandle } from '../test/integration/helpers/agent-handle';
import { CoordinatorHarness } from '../test/integration/helpers/coordinator-harness';
import { PidTracker } from '../test/integration/helpers/pid-tracker';
import { waitFor } from '../test/integration/helpers/wait';
import { BareTorchrun } from './lib/bare-torchrun';
import { ProgressStream, steadyStepRate, type StepRate } from './lib/progress-stream';
import { intFlag, median, printTable } from './lib/stats';

const STEPS = intFlag('steps', 1500, 100, 100_000);
const ROUNDS = intFlag('rounds', 3, 1, 20);
const BATCH = 32;
const SAMPLES = 4096;
const NPROC = 2;
const root = findRepoRoot();
const TRAINER_ARGS = [path.join(root, 'assets/trainers/ddp_example.py'), '--steps', String(STEPS), '--batch', String(BATCH), '--checkpoint-every', '100', '--samples', String(SAMPLES)];

interface Result {
  rate: StepRate;
  wallS: number;
}

async function throughGpuShare(coordinator: CoordinatorHarness, agent: AgentHandle, round: number): Promise<Result & { argv: string }> {
  const stream = new ProgressStream();
  let runId = '';
  const unsubscribe = coordinator.service.subscribe((c) => {
    if (c.type === 'output' && c.runId === runId) stream.push(c.data);
  });
  const began = performance.now();
  try {
    const run = await coordinator.startRun({ name: `throughput-${round}`, command: TRAINER_ARGS, samples: SAMPLES, minWorkers: 1, maxWorkers: 1, nprocPerNode: NPROC, maxRestarts: 0 });
    runId = run.id;
    const done = await coordinator.waitForRun(run.id, 'the run to end', (r) => (['finished', 'failed', 'stopped'].includes(r.state) ? r : null), 600_000);
    if (done.state !== 'finished') throw new Error(`run ${done.id} ${done.state}: ${done.stateCause}`);
  } finally {
    unsubscribe();
  }
  const wallS = (performance.now() - began) / 1000;
  const start = agent.starts.find((s) => s.runId === runId);
  const rate = steadyStepRate(stream.lines, BATCH);
  if (!start || !rate) throw new Error(`no launch or too few progress lines for ${runId} (${stream.lines.length} lines)`);
  return { rate, wallS, argv: start.argv };
}

async function byHand(agentArgv: string, round: number): Promise<Result> {
  const port = await findFreePort();
  const logDir = mkdtempSync(path.join(tmpdir(), 'gpu-share-bench-logs-'));
  const checkpoints = mkdtempSync(path.join(tmpdir(), 'gpu-share-bench-ckpt-'));
  // The agent logs its argv space-separated; none of our arguments contain spaces.
  const argv = agentArgv.split(' ').map((a) =>
    a.startsWith('--rdzv_endpoint=') ? `--rdzv_endpoint=127.0.0.1:${port}` : a.startsWith('--rdzv_id=') ? `--rdzv_id=by-hand-${round}` : a.startsWith('--log_dir=') ? `--log_dir=${logDir}` : a,
  );
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(RANK|WORLD_SIZE|LOCAL_RANK|MASTER_ADDR|MASTER_PORT|TORCHELASTIC_.*|GPU_SHARE_.*)$/.test(k)) delete env[k];
  // What the agent sets too: unbuffered output and a (fresh) checkpoint folder, so both checkpoint alike.
  Object.assign(env, { PYTHONUNBUFFERED: '1', GPU_SHARE_CHECKPOINT_DIR: checkpoints });
  const began = performance.now();
  const proc = new BareTorchrun(argv, env);
  try {
    const exit = await proc.exited;
    if (exit.code !== 0) throw new Error(`torchrun by hand exited ${JSON.stringify(exit)}: ${proc.stderr().slice(-800)}`);
  } finally {
    proc.signalGroup('SIGKILL');
    rmSync(logDir, { recursive: true, force: true });
    rmSync(checkpoints, { recursive: true, force: true });
  }
  const rate = steadyStepRate(proc.progress.lines, BATCH);
  if (!rate) throw new Error(`too few progress lines by hand (${proc.progress.lines.length})`);
  return { rate, wallS: (performance.now() - began) / 1000 };
}

const load0 = loadavg()[0]!;
const entry = await bundleAgent(root);
const tracker = new PidTracker(1000);
const coordinator = await CoordinatorHarness.start();
const agent = new AgentHandle({ entry, coordinatorUrl: coordinator.url, token: coordinator.joinToken, name: 'bench-node', showOutput: false });
tracker.addRoot(agent.pid);
const rows: string[][] = [];
const a: number[] = [];
const b: number[] = [];
try {
  await agent.ready();
  await waitFor('the agent to be active', () => coordinator.workerState(agent.workerId!) === 'active', { timeoutMs: 15_000 });
  console.log(`${ROUNDS} rounds of ${STEPS} steps, ${NPROC} ranks (gloo, CPU), batch ${BATCH}; load average ${load0.toFixed(2)} on ${cpus().length} cores`);
  for (let round = 1; round <= ROUNDS; round++) {
    const viaApp = await throughGpuShare(coordinator, agent, round);
    const hand = await byHand(viaApp.argv, round);
    a.push(viaApp.rate.stepsPerSec);
    b.push(hand.rate.stepsPerSec);
    rows.push([
      String(round),
      viaApp.rate.stepsPerSec.toFixed(1),
      hand.rate.stepsPerSec.toFixed(1),
      (viaApp.rate.stepsPerSec / hand.rate.stepsPerSec).toFixed(3),
      `${viaApp.wallS.toFixed(1)} s`,
      `${hand.wallS.toFixed(1)} s`,
    ]);
    console.log(`round ${round}: GPU Share ${viaApp.rate.stepsPerSec.toFixed(1)} steps/s, by hand ${hand.rate.stepsPerSec.toFixed(1)} steps/s`);
    if (round === 1) console.log(`command: ${viaApp.argv}`);
  }
} finally {
  agent.signal('SIGTERM');
  await Promise.race([agent.exited, new Promise((r) => setTimeout(r, 10_000))]);
  tracker.killAll();
  tracker.stop();
  await coordinator.close();
  rmSync(agent.dataDir, { recursive: true, force: true });
  rmSync(entry, { force: true });
}
console.log(`\nsteps/s of rank 0, steady part (a: one agent, nprocPerNode ${NPROC}; b: the same torchrun argv by hand)`);
printTable(['round', 'a: GPU Share', 'b: by hand', 'a/b', 'a: wall (start→end)', 'b: wall'], rows);
const ratio = median(a) / median(b);
console.log(`median: GPU Share ${median(a).toFixed(1)} steps/s, by hand ${median(b).toFixed(1)} steps/s, ratio ${ratio.toFixed(3)} (target ≥ 0.98: ${ratio >= 0.98 ? 'met' : 'NOT met'}); load average ${load0.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`);
