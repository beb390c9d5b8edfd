/**
 * Crash tests of "state that survives a restart", with nothing faked: `gpu-share serve` (the built CLI) and two
 * `gpu-share worker` agents as OS processes on 127.0.0.1, running the example trainer on real torchrun (gloo,
 * CPU). For each of 20 seeds a run starts and serve is SIGKILLed at a seeded random moment of it (while the run
 * launches, or after a random step); then state.db must pass `PRAGMA integrity_check`, serve restarts on the
 * same data folder and ports, and the run and every event seen before the kill must be there. The agents kept
 * their trainers through the outage and re-attach (failover grace, coordinator-failover.test.ts): the run goes on
 * in the same generation, no step redone, nothing relaunched, no restart charged, and finishes at --steps. Only a
 * kill so early that an agent had not launched its trainer yet (its start died with serve) relaunches the run as
 * the next generation, still without charging a restart. No process the test started may be left.
 *
 * One run per seed rather than 20 kills of one long run: each seed then checks the whole promise (kill, restore,
 * rejoin, resume from a checkpoint, finish), and the kill moments spread over a run's whole life, its launch and
 * last steps included, which one long run would reach once at most. Serve's data folder and the agents carry
 * over from seed to seed, so each restart also finds the earlier runs (finished) in the database. A seed costs
 * about 10 s here: one torchrun launch, ~3 s of steps, one restart of serve.
 */
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src-shared/training';
import { describeState, type CoordinatorState } from '../multihost/helpers/app';
import { seededRandom } from '../multihost/helpers/fault-proxy';
import { findRepoRoot } from './helpers/agent-bundle';
import { TORCH_PYTHON } from './helpers/agent-handle';
import type { OperatorApi } from './helpers/operator-api';
import { describeProcesses } from './helpers/pid-tracker';
import { restartServe, useServedCluster, type ServedCluster as Cluster } from './helpers/served-cluster';
import { waitFor } from './helpers/wait';

const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);
const STEPS = 24;
const STEP_SLEEP_S = 0.12;
const CHECKPOINT_EVERY = 4;
/** The launch (rendezvous, torch import) gets this many of the kill moments' slots, spread over LAUNCH_MS. */
const LAUNCH_SLOTS = 8;
const LAUNCH_MS = 3000;
const ENDED = new Set(['finished', 'failed', 'stopped']);

const root = findRepoRoot();
const TRAINER = path.join(root, 'assets', 'trainers', 'ddp_example.py');
const torchMissing = spawnSync(TORCH_PYTHON, ['-c', 'import torch'], { encoding: 'utf8' }).status !== 0;
if (torchMissing && process.env.CI === 'true') throw new Error(`CI must run the crash tests, but ${TORCH_PYTHON} cannot import torch`);

const requireCluster = useServedCluster({ prefix: 'gpu-share-crash-restart-', agents: ['alpha', 'beta'], skip: torchMissing });

/** Polls GET /v1/state until `check` holds; the timeout names what was last seen. */
async function waitForState<T>(api: OperatorApi, what: string, check: (s: CoordinatorState) => T | null | undefined | false, timeoutMs: number): Promise<T> {
  let last: CoordinatorState | null = null;
  let error = '';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      last = await api.state();
      const value = check(last);
      if (value) return value;
    } catch (e) {
      error = (e as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}:\n${describeState(last, error)}`);
    await sleep(200);
  }
}

function runIn(state: CoordinatorState, runId: string): RunSnapshot | undefined {
  return state.runs.find((r) => r.id === runId);
}

/** Where each agent's progress lines of this seed's run begin (the agents live through every seed). */
type Marks = number[];

/** Steps the agents printed for this run so far. */
function stepsSeen(c: Cluster, from: Marks): number[] {
  return c.agents.flatMap((a, i) => a.progress.slice(from[i]).map((p) => p.line.step));
}

/** "generation 1: steps 0–21 from 0; generation 2: steps 22–23 from 22", from what the agents printed. */
function trainingStory(c: Cluster, from: Marks): string {
  const byGeneration = new Map<number, { lo: number; hi: number; resumed: Set<number> }>();
  c.agents.forEach((a, i) => {
    for (const p of a.progress.slice(from[i])) {
      const g = byGeneration.get(p.generation ?? 0) ?? { lo: Infinity, hi: -1, resumed: new Set<number>() };
      g.lo = Math.min(g.lo, p.line.step);
      g.hi = Math.max(g.hi, p.line.step);
      if (p.line.resumedFrom !== null) g.resumed.add(p.line.resumedFrom);
      byGeneration.set(p.generation ?? 0, g);
    }
  });
  return [...byGeneration].map(([gen, g]) => `generation ${gen}: steps ${g.lo}–${g.hi} from ${[...g.resumed].join('/')}`).join('; ') || 'no steps printed';
}

interface KillPlan {
  describe: string;
  /** Resolves at the kill moment. */
  wait(): Promise<void>;
}

/**
 * A moment spread over the run's whole life: one of LAUNCH_SLOTS + STEPS slots, uniformly. A launch slot is a
 * delay after the run was started (generation 1 still launching); a step slot is "right after step s was
 * printed", plus part of a step's sleep (none after the last step, whose exit ends the run).
 */
function planKill(seed: number, c: Cluster, from: Marks): KillPlan {
  const random = seededRandom(seed);
  const slot = Math.floor(random() * (LAUNCH_SLOTS + STEPS));
  const fraction = random();
  if (slot < LAUNCH_SLOTS) {
    const ms = Math.round(((slot + fraction) / LAUNCH_SLOTS) * LAUNCH_MS);
    return { describe: `${ms} ms after the run started`, wait: () => sleep(ms) };
  }
  const step = slot - LAUNCH_SLOTS;
  const extraMs = step === STEPS - 1 ? 0 : Math.round(fraction * STEP_SLEEP_S * 1000);
  return {
    describe: `${extraMs} ms after step ${step} was printed`,
    wait: async () => {
      await waitFor(`step ${step} of the run`, () => Math.max(-1, ...stepsSeen(c, from)) >= step, {
        timeoutMs: 60_000,
        describe: () => c.agents.map((a) => `${a.name}: ${a.tail(5)}`).join('\n'),
      });
      await sleep(extraMs);
    },
  };
}

/** What the test knew at the kill: the API's answer, the steps printed, the checkpoint on disk, the URLs. */
interface BeforeKill {
  plan: KillPlan;
  state: CoordinatorState;
  run: RunSnapshot;
  lastStep: number;
  /** The step the newest checkpoint on disk holds at least (0: none yet). */
  checkpoint: number;
  pageUrl: string;
  joinUrl: string;
  /** Per agent: whether it had announced launching the run's generation at the kill. */
  launched: boolean[];
}

async function observe(c: Cluster, runId: string, plan: KillPlan, from: Marks): Promise<BeforeKill> {
  const state = await c.api.state();
  const lastStep = Math.max(-1, ...stepsSeen(c, from));
  const onDisk = c.agents.some((a) => existsSync(path.join(a.dataDir, 'checkpoints', runId, 'ddp_example.pt')));
  const checkpoint = onDisk ? Math.floor((lastStep + 1) / CHECKPOINT_EVERY) * CHECKPOINT_EVERY : 0;
  const run = runIn(state, runId)!;
  const launched = c.agents.map((a) => a.starts.some((s) => s.runId === runId && s.generation === run.generation));
  return { plan, state, run, lastStep, checkpoint, pageUrl: c.serve.pageUrl, joinUrl: c.serve.join.url.href, launched };
}

/** Opens state.db read-only, as nothing else has it open, and runs SQLite's own check of every page and index. */
function integrityCheck(dataDir: string): unknown {
  const db = new Database(path.join(dataDir, 'state.db'), { readonly: true, fileMustExist: true });
  try {
    return db.pragma('integrity_check', { simple: true });
  } finally {
    db.close();
  }
}

/** SIGKILLs serve by its pid, checks the database it left, and starts serve again on the same folder and ports. */
async function killAndRestart(c: Cluster, seen: BeforeKill): Promise<CoordinatorState> {
  const killed = c.serve;
  c.tracker.scan();
  expect(await killed.kill()).toEqual({ code: null, signal: 'SIGKILL' });
  expect(c.tracker.alive(killed.pid), 'processes of the killed serve').toEqual([]);
  expect(integrityCheck(c.dataDir), `state.db after a SIGKILL ${seen.plan.describe}`).toBe('ok');
  c.serve = await restartServe(c);
  // The secrets are kept: the same page URL (its token) and join URL, so an open tab and the agents come back.
  expect(c.serve.pageUrl).toBe(seen.pageUrl);
  expect(c.serve.join.url.href).toBe(seen.joinUrl);
  return c.api.state();
}

/** Right after the restart: the run, every event and worker seen before the kill, earlier runs as they ended. */
function checkRestored(after: CoordinatorState, seen: BeforeKill): void {
  const restored = runIn(after, seen.run.id);
  expect(restored, `run ${seen.run.id} after the restart (killed ${seen.plan.describe})`).toBeDefined();
  expect(restored!.spec).toEqual(seen.run.spec);
  expect(restored!.startedAt).toBe(seen.run.startedAt);
  expect(restored!.generation).toBeGreaterThanOrEqual(seen.run.generation);
  expect(restored!.shardHistory.slice(0, seen.run.shardHistory.length)).toEqual(seen.run.shardHistory);
  const afterBySeq = new Map(after.events.map((e) => [e.seq, e]));
  const lost = seen.state.events.filter((e) => JSON.stringify(afterBySeq.get(e.seq)) !== JSON.stringify(e)).map((e) => ({ before: e, after: afterBySeq.get(e.seq) ?? null }));
  expect.soft(lost, `events seen before the kill (${seen.plan.describe}) that are missing or changed after the restart`).toEqual([]);
  for (const w of seen.state.workers) expect(after.workers.find((x) => x.id === w.id)?.node, `worker ${w.id} (${w.node}) after the restart`).toBe(w.node);
  for (const r of seen.state.runs.filter((x) => x.id !== seen.run.id)) expect(runIn(after, r.id)?.state, `earlier run ${r.id}`).toBe(r.state);
}

/**
 * The run went on in its generation (or, when an agent had not launched it at the kill, resumed as a new one from
 * the checkpoint), charged nothing, and ended at --steps.
 */
async function checkFinished(c: Cluster, seed: number, seen: BeforeKill, from: Marks, startsFrom: Marks): Promise<void> {
  const runId = seen.run.id;
  const finished = await waitForState(c.api, `run ${runId} to end after the restart`, (s) => {
    const r = runIn(s, runId);
    return r && ENDED.has(r.state) ? r : null;
  }, 120_000);
  const output = await c.api.output(runId);
  const story = `killed ${seen.plan.describe} (generation ${seen.run.generation}, step ${seen.lastStep} printed, checkpoint ${seen.checkpoint}); ${trainingStory(c, from)}; the run shows step ${finished.progress?.step ?? '-'} of ${finished.progress?.totalSteps ?? '-'}`;
  console.info(`seed ${seed}: ${story}`);
  expect(finished.state, `${story}: ${finished.stateCause}\n${output.slice(-3000)}`).toBe('finished');
  expect(finished.restartsUsed, story).toBe(0);
  const state = await c.api.state();
  const newEvents = state.events.filter((e) => e.runId === runId && e.seq > Math.max(0, ...seen.state.events.map((x) => x.seq)));
  expect(newEvents.some((e) => e.kind === 'run-resumed' && /the coordinator restarted/.test(e.message)), JSON.stringify(newEvents)).toBe(true);
  expect(newEvents.some((e) => e.kind === 'run-paused'), JSON.stringify(newEvents)).toBe(false);
  expect(output).toContain('the coordinator restarted');
  const steps = stepsSeen(c, from);
  expect(Math.max(...steps), `the last step printed; ${story}`).toBe(STEPS - 1);
  expect.soft(finished.progress?.step, `the step the run shows at the end; ${story}`).toBe(STEPS - 1);
  expect.soft(finished.progress?.totalSteps, story).toBe(STEPS);
  if (finished.generation === seen.run.generation) {
    // The trainers went on through the restart: one launch each for the whole run, every step printed once.
    for (const [i, a] of c.agents.entries()) {
      expect(a.starts.slice(startsFrom[i]).map((x) => x.generation), `${a.name}'s launches; ${story}`).toEqual([seen.run.generation]);
      expect(a.progress.slice(from[i]).map((p) => p.line.step), `${a.name}'s steps; ${story}`).toEqual([...Array(STEPS).keys()]);
      const w = state.workers.find((x) => x.id === a.workerId);
      expect(w, `${a.name} after the run`).toMatchObject({ state: 'active', incarnation: seen.state.workers.find((x) => x.id === a.workerId)!.incarnation });
    }
    return;
  }
  // Relaunched: only when a start died with serve (an agent had not launched at the kill), and without a charge.
  expect(seen.launched.every(Boolean), `a relaunch though both agents had launched generation ${seen.run.generation}; ${story}`).toBe(false);
  expect(finished.generation, story).toBeGreaterThan(seen.run.generation);
  for (const [i, a] of c.agents.entries()) {
    expect(state.workers.find((x) => x.id === a.workerId)?.state, `${a.name} after the run`).toBe('active');
    expect(a.starts.slice(startsFrom[i]).some((s) => s.runId === runId && s.generation === finished.generation), `${a.name} launched generation ${finished.generation}`).toBe(true);
  }
  if (seen.checkpoint === 0) return;
  const lastGeneration = c.agents.flatMap((a, i) => a.progress.slice(from[i]).filter((p) => p.generation === finished.generation).map((p) => p.line));
  // With nothing left to train (the trainers finished every step while serve was down) the last generation prints no step.
  for (const line of lastGeneration) expect.soft(line.resumedFrom, `resumed_from in generation ${finished.generation}; ${story}`).toBeGreaterThanOrEqual(seen.checkpoint);
  if (lastGeneration.length > 0) expect(output).toContain(`"resumed_from":${lastGeneration[0]!.resumedFrom}`);
}

/** Waits until below each agent only the agent itself still runs (no launcher or rank of any generation). */
function trainingGone(c: Cluster): Promise<boolean> {
  // An agent's idle warm launcher is no training: it stays as long as its agent.
  const leftover = () => c.agents.flatMap((a) => c.tracker.training(a.pid));
  return waitFor('every training process to end', () => leftover().length === 0, { timeoutMs: 20_000, describe: () => describeProcesses(leftover()) });
}

describe.skipIf(torchMissing)(`SIGKILL of gpu-share serve mid-run (needs ${TORCH_PYTHON} with torch; skipped without it, except under CI)`, () => {
  describe('one run per seed, serve killed once in it', () => {
    // After a seed that failed halfway: serve up again, no live run, both workers active, so the next seed starts clean.
    afterEach(async () => {
      if (torchMissing) return;
      const c = requireCluster();
      if (c.serve.exit) c.serve = await restartServe(c);
      for (const r of (await c.api.state()).runs.filter((x) => !ENDED.has(x.state))) await c.api.stopRun(r.id);
      await waitForState(c.api, 'no live run and both workers active', (s) => s.runs.every((r) => ENDED.has(r.state)) && s.workers.filter((w) => w.state === 'active').length === 2, 60_000);
      await trainingGone(c);
    });

    it.each(SEEDS)('seed %i: the restarted serve has the run and its events, and the run goes on and finishes', async (seed) => {
      const c = requireCluster();
      const from = c.agents.map((a) => a.progress.length);
      const startsFrom = c.agents.map((a) => a.starts.length);
      const run = await c.api.startRun({
        name: `crash seed ${seed}`,
        command: [TRAINER, '--steps', String(STEPS), '--step-sleep', String(STEP_SLEEP_S), '--checkpoint-every', String(CHECKPOINT_EVERY), '--batch', '8'],
        samples: 512,
        minWorkers: 2,
        maxWorkers: 2,
        nprocPerNode: 1,
        maxRestarts: 3,
      });
      const plan = planKill(seed, c, from);
      await plan.wait();
      const seen = await observe(c, run.id, plan, from);
      expect(ENDED.has(seen.run.state), `the kill (${plan.describe}) came after the run ended: ${seen.run.state}`).toBe(false);

      checkRestored(await killAndRestart(c, seen), seen);
      await checkFinished(c, seed, seen, from, startsFrom);
      // Nothing of the old generations is left: below each agent only the agent itself still runs.
      await trainingGone(c);
    });
  });

  it('leaves no process behind: serve, the agents and everything they started end', async () => {
    const c = requireCluster();
    for (const a of c.agents) a.signal('SIGTERM');
    const exits = await Promise.all(c.agents.map((a) => a.exited));
    expect(exits.map((e) => e.code)).toEqual([0, 0]);
    expect(await c.serve.stop()).toEqual({ code: 0, signal: null });
    c.tracker.scan();
    await waitFor('no tracked process running', () => c.tracker.alive().length === 0, { timeoutMs: 10_000, describe: () => describeProcesses(c.tracker.alive()) });
    // Every serve (the first and one per seed), both agents and their training were tracked.
    expect(c.tracker.all().length).toBeGreaterThan(1 + SEEDS.length + 2);
  });
});
