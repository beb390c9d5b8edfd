/**
 * Training throughput through GPU Share versus the same torchrun command by hand (target ratio ≥ 0.98).
 *
 *   node scripts/run-ts.mjs bench/steps-per-second.ts [--steps 4000] [--rounds 5]
 *
 * (a) GPU Share: the coordinator (in this process) and ONE worker agent process with nprocPerNode 2, so the
 *     agent runs torchrun in its pty with 2 ranks (gloo on CPU), parses every line and streams all output to
 *     the coordinator, which this process receives as the app would.
 * (b) By hand: the exact argv that agent launched (taken from its log), with a fresh rendezvous port, id and
 *     log dir, as a plain child process; the same trainer arguments and a fresh checkpoint folder.
 * Rounds alternate a b, b a, a b… so load from anything else on the machine hits both alike. Steps/s is rank 0's,
 * over the steady part (the first 20 % and last 5 % of steps left out), from the trainer's own step timings,
 * read after each run from torchrun's log of rank 0 (both sides write one), so measuring adds no load while
 * training runs. The agent's and the coordinator's CPU seconds per run are printed to explain any gap, and per
 * progress line (the agent parses each line and sends it as a `progress` report; the coordinator no longer
 * re-reads the output for them).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { findFreePort } from '../src-main/agent/coordinator-client';
import type { RunSnapshot } from '../src-shared/training';
import { bundleAgent, findRepoRoot } from '../test/integration/helpers/agent-bundle';
import { AgentHandle } from '../test/integration/helpers/agent-handle';
import { CoordinatorHarness } from '../test/integration/helpers/coordinator-harness';
import { PidTracker } from '../test/integration/helpers/pid-tracker';
import { readProc } from '../test/integration/helpers/proc-table';
import { waitFor } from '../test/integration/helpers/wait';
import { BareTorchrun } from './lib/bare-torchrun';
import { ProgressStream, steadyStepRate, type StepRate } from './lib/progress-stream';
import { intFlag } from './lib/flags';
import { median, printTable } from './lib/stats';

const STEPS = intFlag('steps', 4000, 100, 100_000);
const ROUNDS = intFlag('rounds', 5, 1, 20);
const BATCH = 32;
const SAMPLES = 4096;
const NPROC = 2;
/** Progress lines one run prints: every rank prints one per step. */
const LINES = STEPS * NPROC;
const root = findRepoRoot();
const TRAINER_ARGS = [path.join(root, 'assets/trainers/ddp_example.py'), '--steps', String(STEPS), '--batch', String(BATCH), '--checkpoint-every', '100', '--samples', String(SAMPLES)];

interface Result {
  rate: StepRate;
  wallS: number;
  /** Where the rate was read from. */
  source: string;
}

/**
 * Rank 0's progress lines: from torchrun's own log file (<log_dir>/<id>_<random>/attempt_N/0/stdout.log, written
 * when it redirects, as it does on torch 1.x) so reading them costs nothing during the run; else from `fallback`.
 */
function rankZeroLines(argv: string, fallback: string): { text: string; source: string } {
  const logDir = /--log_dir=(\S+)/.exec(argv)?.[1];
  if (logDir && existsSync(logDir)) {
    const files: string[] = [];
    for (const run of readdirSync(logDir)) {
      const runDir = path.join(logDir, run);
      if (!statSync(runDir).isDirectory()) continue;
      for (const attempt of readdirSync(runDir).filter((a) => a.startsWith('attempt_')).sort()) {
        const file = path.join(runDir, attempt, '0', 'stdout.log');
        if (existsSync(file)) files.push(file);
      }
    }
    if (files.length > 0) return { text: files.map((f) => readFileSync(f, 'utf8')).join(''), source: 'torchrun log' };
  }
  return { text: fallback, source: 'live output' };
}

function rateOf(text: string): StepRate | null {
  const stream = new ProgressStream();
  stream.push(text.endsWith('\n') ? text : `${text}\n`);
  return steadyStepRate(stream.lines, BATCH);
}

interface AppResult extends Result {
  argv: string;
  /** CPU seconds the agent process and this process (the coordinator, less the bench's process scans) used during the run. */
  agentCpuS: number;
  coordinatorCpuS: number;
}

function cpuSeconds(pid: number): number {
  return (readProc(pid)?.cpuTicks ?? NaN) / 100;
}

async function throughGpuShare(coordinator: CoordinatorHarness, agent: AgentHandle, round: number): Promise<AppResult> {
  // The live output is only kept (not parsed) while training runs, so measuring costs the coordinator nothing extra.
  const chunks: string[] = [];
  let runId = '';
  // The run's end is read from the change feed: waitForRun would build every run's snapshot on each change and
  // agent log line, CPU of the bench's that the coordinator's figure would count.
  let ended: ((run: RunSnapshot) => void) | null = null;
  const end = new Promise<RunSnapshot>((resolve) => (ended = resolve));
  const unsubscribe = coordinator.service.subscribe((c) => {
    if (c.type === 'output' && c.runId === runId) chunks.push(c.data);
    else if (c.type === 'run' && c.run.id === runId && ['finished', 'failed', 'stopped'].includes(c.run.state)) ended?.(c.run);
  });
  const began = performance.now();
  const agentCpu0 = cpuSeconds(agent.pid);
  const ownCpu0 = process.cpuUsage();
  const trackerUs0 = trackerUs;
  try {
    const run = await coordinator.startRun({ name: `throughput-${round}`, command: TRAINER_ARGS, samples: SAMPLES, minWorkers: 1, maxWorkers: 1, nprocPerNode: NPROC, maxRestarts: 0 });
    runId = run.id;
    // A slow look as well, for an end the feed did not carry; and a bound.
    const look = setInterval(() => {
      const r = coordinator.run(runId);
      if (['finished', 'failed', 'stopped'].includes(r.state)) ended?.(r);
    }, 2000);
    const bound = setTimeout(() => ended?.(coordinator.run(runId)), 600_000);
    const done = await end.finally(() => {
      clearInterval(look);
      clearTimeout(bound);
    });
    if (done.state !== 'finished') throw new Error(`run ${done.id} ${done.state}: ${done.stateCause}`);
  } finally {
    unsubscribe();
  }
  const wallS = (performance.now() - began) / 1000;
  const ownCpu = process.cpuUsage(ownCpu0);
  const agentCpuS = cpuSeconds(agent.pid) - agentCpu0;
  const start = agent.starts.find((s) => s.runId === runId);
  if (!start) throw new Error(`the agent never announced launching ${runId}`);
  const lines = rankZeroLines(start.argv, chunks.join(''));
  const rate = rateOf(lines.text);
  if (!rate) throw new Error(`too few progress lines for ${runId} (from ${lines.source})`);
  return { rate, wallS, source: lines.source, argv: start.argv, agentCpuS, coordinatorCpuS: (ownCpu.user + ownCpu.system - (trackerUs - trackerUs0)) / 1e6 };
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
  const proc = new BareTorchrun(argv, env, undefined, { keepOutput: true });
  try {
    const exit = await proc.exited;
    if (exit.code !== 0) throw new Error(`torchrun by hand exited ${JSON.stringify(exit)}: ${proc.stderr().slice(-800)}`);
    const wallS = (performance.now() - began) / 1000;
    const lines = rankZeroLines(argv.join(' '), proc.output());
    const rate = rateOf(lines.text);
    if (!rate) throw new Error(`too few progress lines by hand (from ${lines.source})`);
    return { rate, wallS, source: lines.source };
  } finally {
    proc.signalGroup('SIGKILL');
    rmSync(logDir, { recursive: true, force: true });
    rmSync(checkpoints, { recursive: true, force: true });
  }
}

const load0 = loadavg()[0]!;
const entry = await bundleAgent(root);
const tracker = new PidTracker(1000);
// The tracker scans /proc in this process (the coordinator's): its CPU is the bench's, not the app's, and on a
// machine with many processes it was a third of the "coordinator CPU" figure. Counted apart and taken off.
let trackerUs = 0;
const scan = tracker.scan.bind(tracker);
tracker.scan = (): void => {
  const t0 = process.cpuUsage();
  scan();
  const t = process.cpuUsage(t0);
  trackerUs += t.user + t.system;
};
const coordinator = await CoordinatorHarness.start();
const agent = new AgentHandle({ entry, coordinatorUrl: coordinator.url, token: coordinator.joinToken, name: 'bench-node', showOutput: false });
tracker.addRoot(agent.pid);
const rows: string[][] = [];
const a: number[] = [];
const b: number[] = [];
/** App CPU µs per progress line of each round: agent, coordinator. */
const perLine: { agent: number[]; coordinator: number[] } = { agent: [], coordinator: [] };
const sources = new Set<string>();
let lastArgv = '';
try {
  await agent.ready();
  await waitFor('the agent to be active', () => coordinator.workerState(agent.workerId!) === 'active', { timeoutMs: 15_000 });
  console.log(`${ROUNDS} rounds of ${STEPS} steps, ${NPROC} ranks (gloo, CPU), batch ${BATCH}; load average ${load0.toFixed(2)} on ${cpus().length} cores`);
  for (let round = 1; round <= ROUNDS; round++) {
    // The by-hand command is the agent's own argv, so round 1 starts with GPU Share; later rounds swap the order.
    let viaApp: AppResult;
    let hand: Result;
    if (round % 2 === 1 || !lastArgv) {
      viaApp = await throughGpuShare(coordinator, agent, round);
      hand = await byHand(viaApp.argv, round);
    } else {
      hand = await byHand(lastArgv, round);
      viaApp = await throughGpuShare(coordinator, agent, round);
    }
    lastArgv = viaApp.argv;
    a.push(viaApp.rate.stepsPerSec);
    b.push(hand.rate.stepsPerSec);
    perLine.agent.push((viaApp.agentCpuS * 1e6) / LINES);
    perLine.coordinator.push((viaApp.coordinatorCpuS * 1e6) / LINES);
    rows.push([
      String(round),
      viaApp.rate.stepsPerSec.toFixed(1),
      hand.rate.stepsPerSec.toFixed(1),
      (viaApp.rate.stepsPerSec / hand.rate.stepsPerSec).toFixed(3),
      `${viaApp.wallS.toFixed(1)} s`,
      `${hand.wallS.toFixed(1)} s`,
      `${viaApp.agentCpuS.toFixed(2)} s`,
      `${viaApp.coordinatorCpuS.toFixed(2)} s`,
      `${((viaApp.agentCpuS * 1e6) / LINES).toFixed(0)} / ${((viaApp.coordinatorCpuS * 1e6) / LINES).toFixed(0)}`,
    ]);
    sources.add(viaApp.source).add(hand.source);
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
printTable(['round', 'a: GPU Share', 'b: by hand', 'a/b', 'a: wall (start→end)', 'b: wall', 'a: agent CPU', 'a: coordinator CPU', 'µs/line agent / coord'], rows);
console.log(`(rates read from: ${[...sources].join(', ')}; CPU in seconds over the run's wall time, ${cpus().length} cores in all; µs/line: that CPU over the ${LINES} progress lines a run prints, start-up and heartbeats included)`);
const app = { agent: median(perLine.agent), coordinator: median(perLine.coordinator) };
console.log(`app CPU per progress line (median): ${(app.agent + app.coordinator).toFixed(0)} µs (agent ${app.agent.toFixed(0)} + coordinator ${app.coordinator.toFixed(0)}; the bench's own process scans left out)`);
const ratio = median(a) / median(b);
console.log(`median: GPU Share ${median(a).toFixed(1)} steps/s, by hand ${median(b).toFixed(1)} steps/s, ratio ${ratio.toFixed(3)} (target ≥ 0.98: ${ratio >= 0.98 ? 'met' : 'NOT met'}); load average ${load0.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`);
