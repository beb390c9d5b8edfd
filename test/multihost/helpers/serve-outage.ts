/**
 * The coordinator-outage scenario that serve-restart.test.ts asserts and bench/coordinator-outage.ts measures, in
 * one place so the two can never measure different things: two workers on other hosts train a run; `serve` is
 * SIGKILLed once the operator sees step S and started again on the same data folder and port after an outage; then
 * what it cost, as an operator and the trainers' own output see it:
 *   - stall: from the kill until the operator API shows a step beyond S (polled every 100 ms);
 *   - steps redone: steps a worker's trainers printed more than once (a relaunch from a checkpoint redoes some);
 *   - restarts charged: the run's restartsUsed after the run ended, minus before the kill;
 *   - trainer pids kept: the Python processes under each worker agent are the same ones after the stall.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { RunSnapshot } from '../../../src-shared/training';
import { describeState } from './app';
import { ENDED, runOf } from './run-watch';
import type { Testbed } from './testbed';
import type { WorkerOnHost } from './worker';

export interface OutageResult {
  /** The step the operator API showed last before the kill. */
  killStep: number;
  /** Kill → the restarted `serve` printed its join line, ms. */
  downMs: number;
  /** Kill → the API first showed a step beyond killStep, ms. */
  stallMs: number;
  /** Steps printed twice by one trainer rank, over every worker. */
  stepsRedone: number;
  restartsCharged: number;
  generationBefore: number;
  /** The run's generation when the step beyond S showed, and when it ended. */
  generationAfter: number;
  generationAtEnd: number;
  /** Python processes under each worker agent before the kill, and once the step beyond S showed (sorted). */
  pidsBefore: Record<string, number[]>;
  pidsAfter: Record<string, number[]>;
  pidsKept: boolean;
  /** Steps in (killStep, last step] the run's loss curve lacks. */
  lossGaps: number[];
  final: RunSnapshot;
}

/**
 * Trainer processes (python: torchrun and its ranks) under one worker agent, sorted. The name is read now: the
 * tracker keeps the one it first saw, which for a process caught between fork and exec is its parent's.
 */
export function trainerPids(tb: Testbed, w: WorkerOnHost): number[] {
  tb.tracker.scan();
  return tb.tracker
    .alive(w.pid)
    .filter((p) => commNow(p.pid).startsWith('python'))
    .map((p) => p.pid)
    .sort((a, b) => a - b);
}

function commNow(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return ''; // ended in between
  }
}

/** Steps of `runId` one rank printed more than once, summed over ranks (a worker prints its own ranks' lines). */
export function stepsRedone(w: WorkerOnHost, runId: string): number {
  const seen = new Set<string>();
  let again = 0;
  for (const p of w.progress()) {
    if (p.runId !== runId) continue;
    const key = `${p.line.rank ?? 0}:${p.line.step}`;
    if (seen.has(key)) again += 1;
    else seen.add(key);
  }
  return again;
}

/**
 * Runs the scenario on a running run whose members are `members` (testbed host names). Replaces tb.app with the
 * restarted app. Waits for the run to end (it must finish within `endTimeoutMs`).
 */
export async function coordinatorOutage(
  tb: Testbed,
  runId: string,
  opts: { members: string[]; killAtStep: number; outageMs: number; endTimeoutMs: number },
): Promise<OutageResult> {
  const workers = opts.members.map((h) => tb.workers.get(h)!);
  const before = await tb.app.waitForState(
    `run ${runId} to show step ${opts.killAtStep}`,
    (s) => {
      const r = runOf(s, runId);
      if (ENDED.includes(r.state)) throw new Error(`run ${runId} ${r.state} before step ${opts.killAtStep}: ${r.stateCause}`);
      return r.state === 'running' && (r.progress?.step ?? -1) >= opts.killAtStep ? r : null;
    },
    180_000,
    100,
  );
  const pidsBefore = Object.fromEntries(opts.members.map((h, i) => [h, trainerPids(tb, workers[i]!)]));
  // The step the operator saw last: one more look right before the kill.
  const last = runOf(await tb.app.state(), runId);
  const killStep = last.progress?.step ?? before.progress!.step;
  const restarted = await tb.app.crashAndRestart(opts.outageMs);
  tb.app = restarted.app;
  tb.tracker.addRoot(restarted.app.proc.pid);

  const beyond = await tb.app.waitForState(
    `run ${runId} to show a step beyond ${killStep} after the restart`,
    (s) => {
      const r = runOf(s, runId);
      if ((r.progress?.step ?? -1) > killStep) return { r, at: performance.now() };
      if (ENDED.includes(r.state)) throw new Error(`run ${runId} ${r.state} after the restart at step ${r.progress?.step}: ${r.stateCause}`);
      return null;
    },
    opts.endTimeoutMs,
    100,
  );
  const pidsAfter = Object.fromEntries(opts.members.map((h, i) => [h, trainerPids(tb, workers[i]!)]));
  const end = await tb.app.waitForState(
    `run ${runId} to end`,
    (s) => {
      const r = runOf(s, runId);
      return ENDED.includes(r.state) ? { r, s } : null;
    },
    opts.endTimeoutMs,
  );
  if (end.r.state !== 'finished') throw new Error(`run ${runId} ${end.r.state}: ${end.r.stateCause}\n${describeState(end.s)}`);
  const pidsKept = opts.members.every((h) => pidsBefore[h]!.length > 0 && JSON.stringify(pidsBefore[h]) === JSON.stringify(pidsAfter[h]));
  const lastStep = end.r.progress?.step ?? killStep;
  const onCurve = new Set(end.r.lossHistory.map((p) => p.step));
  const lossGaps: number[] = [];
  for (let step = killStep + 1; step <= lastStep; step++) if (!onCurve.has(step)) lossGaps.push(step);
  return {
    killStep,
    downMs: restarted.readyAt - restarted.killedAt,
    stallMs: beyond.at - restarted.killedAt,
    stepsRedone: workers.reduce((n, w) => n + stepsRedone(w, runId), 0),
    restartsCharged: end.r.restartsUsed - before.restartsUsed,
    generationBefore: before.generation,
    generationAfter: beyond.r.generation,
    generationAtEnd: end.r.generation,
    pidsBefore,
    pidsAfter,
    pidsKept,
    lossGaps,
    final: end.r,
  };
}
