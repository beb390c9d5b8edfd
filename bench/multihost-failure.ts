/**
 * Failure detection and recovery across real hosts (network namespaces with their own addresses and
 * unresolvable host names; the test/multihost harness): the app with its own worker on A, `gpu-share worker`
 * on B and C, real torchrun. Needs root. Three figures, each against its target:
 *   - agent killed → marked failed          (target ≤ 1 s: its kernel closes the presence socket)
 *   - link cut     → marked failed          (target ≤ heartbeat timeout + 0.5 s; nothing closes anything)
 *   - agent killed → survivors training again (target ≤ 1.5 s: first progress line of the next generation)
 * The survivors relaunch through their agents' warm launchers (warm-launcher.ts: torch imported ahead, ranks
 * forked); `--cold` turns those off (GPU_SHARE_WARM_LAUNCHER=0) to measure the cold path beside it, and
 * `--timeline` prints the survivor's lines from the kill to its first step (where the time goes). `--worker-a`
 * runs A's worker as its own `gpu-share worker` process beside `serve --no-local-worker`, so the timeline has the
 * store host's lines too (the app's own worker logs nowhere a bench can read).
 *
 * Before each kill the bench waits (up to 60 s) for B's replacement standby to be ready (`--no-settle`: not).
 *
 *   node scripts/run-ts.mjs bench/multihost-failure.ts [--kills 3] [--cuts 2] [--cold] [--no-settle] [--timeline] [--worker-a]
 */
import { performance } from 'node:perf_hooks';
import { canRunApp } from '../test/multihost/helpers/can-make-hosts';
import { eventsOf, idOf, trainingTogether } from '../test/multihost/helpers/run-watch';
import { startTestbed, startWorker, stopTestbed, TRAINER, waitForActive, workerOf, type Testbed } from '../test/multihost/helpers/testbed';
import { hasFlag, intFlag } from './lib/flags';
import { printTable, seconds, summarize } from './lib/stats';

const KILLS = intFlag('kills', 3, 1, 20);
const CUTS = intFlag('cuts', 2, 0, 20);
const TIMEOUT_MS = 5000;
const RECOVER_TARGET_MS = 1500;
/** --cold: every agent launches cold (no standby), the path before issue 16. */
const AGENT_ENV: NodeJS.ProcessEnv = hasFlag('cold') ? { GPU_SHARE_WARM_LAUNCHER: '0' } : {};
const CHECKPOINT_EVERY = 5;
/** --worker-a: A's worker is a separate process (its lines in the timeline), named host-a. */
const WORKER_A = hasFlag('worker-a');
const A_NAME = WORKER_A ? 'host-a' : 'local';

interface KillSample {
  detectMs: number;
  recoverMs: number;
  resumedFrom: number | null;
}

async function startRun(tb: Testbed, name: string, minWorkers: number, maxWorkers: number) {
  return tb.app.startRun({
    name,
    command: [TRAINER, '--steps', '5000', '--step-sleep', '0.05', '--checkpoint-every', String(CHECKPOINT_EVERY)],
    samples: 1200,
    minWorkers,
    maxWorkers,
    heartbeatTimeoutMs: TIMEOUT_MS,
    maxRestarts: 100,
  });
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > timeoutMs) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

async function killRound(tb: Testbed, round: number): Promise<KillSample> {
  const run = await startRun(tb, `kill-${round}`, 2, 3);
  const before = await trainingTogether(tb, run.id, [A_NAME, 'host-b', 'host-c'], { minStep: CHECKPOINT_EVERY * 2, timeoutMs: 150_000 });
  const cId = idOf(before.state, 'host-c');
  const b = tb.workers.get('b')!;
  if (!hasFlag('cold')) {
    // Steady state: the survivor's replacement standby (started after this generation's launch) has imported
    // torch — machines seldom die seconds after a generation starts. --no-settle kills at once instead.
    const lastStart = b.proc.lines.map((l) => /^started run /.test(l.text)).lastIndexOf(true);
    const settled = hasFlag('no-settle') || (await waitUntil(() => b.proc.lines.slice(lastStart).some((l) => /^warm launcher: standby pid \d+ ready/.test(l.text)), 60_000));
    if (!settled) console.log(`  round ${round + 1}: B's standby was not ready after 60 s; killing anyway`);
  }
  const killedWall = Date.now();
  const killedAt = performance.now();
  tb.workers.get('c')!.proc.kill('SIGKILL');
  const failed = await tb.app.waitForState('C failed', (s) => eventsOf(s, 'worker-failed', cId).find((e) => e.at >= killedWall - 50), TIMEOUT_MS + 15_000, 100);
  // The survivors' next step: B's first progress line under a newer generation.
  let first: { at: number; resumedFrom: number | null } | null = null;
  const started = performance.now();
  while (!first && performance.now() - started < 90_000) {
    let generation: number | null = null;
    for (const l of b.proc.lines) {
      const m = /^started run \S+ generation (\d+)/.exec(l.text);
      if (m) generation = Number(m[1]);
      if (l.at > killedAt && generation !== null && generation > before.generation && l.text.includes('GPU_SHARE_PROGRESS')) {
        const resumed = /"resumed_from":\s*(\d+)/.exec(l.text);
        first = { at: l.at, resumedFrom: resumed ? Number(resumed[1]) : null };
        break;
      }
    }
    if (!first) await new Promise((r) => setTimeout(r, 50));
  }
  if (!first) throw new Error('the survivors did not train again within 90 s');
  if (hasFlag('timeline')) {
    // Where the survivors' time went: B's and A's (the app's own worker) lines from the kill to B's first step.
    const aProc = tb.workers.get('a')?.proc ?? tb.app.proc;
    const lines = [...b.proc.lines.map((l) => ({ ...l, who: 'B' })), ...aProc.lines.map((l) => ({ ...l, who: 'A' }))].sort((x, y) => x.at - y.at);
    for (const l of lines) {
      if (l.at < killedAt || l.at > first.at) continue;
      if (/instruction|stopping|exited|started run|launched|warm launcher|gpu-share launcher|GPU_SHARE_PROGRESS|rendezvous|Rendezvous|failed/.test(l.text)) console.log(`  +${Math.round(l.at - killedAt)} ms ${l.who} ${l.text.slice(0, 140)}`);
    }
  }
  await tb.app.stopRun(run.id);
  // C comes back for the next round, from its own data folder (its machine id keeps its name).
  const dataDir = tb.workers.get('c')!.dataDir;
  await startWorker(tb, 'c', { dataDir, env: AGENT_ENV });
  await tb.workers.get('c')!.ready();
  await waitForActive(tb, [...(WORKER_A ? ['host-a'] : []), 'host-b', 'host-c'], !WORKER_A);
  return { detectMs: failed.at - killedWall, recoverMs: first.at - killedAt, resumedFrom: first.resumedFrom };
}

async function cutRound(tb: Testbed, round: number): Promise<number> {
  const run = await startRun(tb, `cut-${round}`, 1, 3);
  const before = await trainingTogether(tb, run.id, [A_NAME, 'host-b', 'host-c'], { minStep: CHECKPOINT_EVERY, timeoutMs: 150_000 });
  const bId = idOf(before.state, 'host-b');
  const incarnation = workerOf(before.state, 'host-b')!.incarnation;
  const cutWall = Date.now();
  tb.cluster.host('b').linkDown();
  let detectMs: number;
  try {
    const failed = await tb.app.waitForState('B failed', (s) => eventsOf(s, 'worker-failed', bId).find((e) => e.at >= cutWall - 50), TIMEOUT_MS + 15_000, 100);
    detectMs = failed.at - cutWall;
  } finally {
    tb.cluster.host('b').linkUp();
  }
  await tb.app.waitForState('B back', (s) => {
    const w = workerOf(s, 'host-b');
    return w && w.incarnation > incarnation && w.state === 'active' ? w : null;
  }, 60_000);
  await tb.app.stopRun(run.id);
  return detectMs;
}

async function main(): Promise<void> {
  const can = canRunApp();
  if (!can.ok) {
    console.error(`multihost-failure: cannot build hosts here: ${can.reason}`);
    process.exit(2);
  }
  const workerHosts = WORKER_A ? ['a', 'b', 'c'] : ['b', 'c'];
  const tb = await startTestbed({
    hosts: ['a', 'b', 'c'],
    app: { autoApprove: true, env: AGENT_ENV, localWorker: !WORKER_A },
    workers: workerHosts.map((host) => ({ host, opts: { env: AGENT_ENV } })),
  });
  console.log(`launch path: ${hasFlag('cold') ? 'cold (GPU_SHARE_WARM_LAUNCHER=0)' : 'warm launchers'}`);
  const kills: KillSample[] = [];
  const cuts: number[] = [];
  try {
    for (let i = 0; i < KILLS; i++) {
      const k = await killRound(tb, i);
      console.log(`kill ${i + 1}: failed after ${k.detectMs} ms, survivors training again after ${Math.round(k.recoverMs)} ms (resumed from step ${k.resumedFrom})`);
      kills.push(k);
    }
    for (let i = 0; i < CUTS; i++) {
      const d = await cutRound(tb, i);
      console.log(`cut ${i + 1}: failed after ${d} ms`);
      cuts.push(d);
    }
  } finally {
    await stopTestbed(tb);
  }
  const detect = summarize(kills.map((k) => k.detectMs));
  const recover = summarize(kills.map((k) => k.recoverMs));
  const cut = summarize(cuts);
  const rows = [
    ['agent killed → failed', `${kills.length}`, seconds(detect.p50), seconds(detect.max), '1.00', (detect.max / 1000).toFixed(2)],
    ['link cut → failed', `${cuts.length}`, seconds(cut.p50), seconds(cut.max), seconds(TIMEOUT_MS + 500), (cut.max / (TIMEOUT_MS + 500)).toFixed(2)],
    ['agent killed → survivors training', `${kills.length}`, seconds(recover.p50), seconds(recover.max), seconds(RECOVER_TARGET_MS), (recover.max / RECOVER_TARGET_MS).toFixed(2)],
  ];
  printTable(['measure', 'n', 'median s', 'max s', 'target s', 'max / target'], rows);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
