/**
 * What the run view says about a run's health, computed from the snapshots and a ticking clock: how far it is
 * and when it ends, which member has gone quiet before the coordinator declares it failed, one row per worker,
 * and an outcome that does not hide the failures on the way. Pure, so each sentence is pinned by a unit test.
 */
import type { RunProgress, RunSnapshot, RunWorkerRow, WorkerSnapshot, WorkerState } from '../../../src-shared/training';
import { offGpuWorkers } from '../../../src-shared/runs/gpu-request';
import { runBadge, type Badge } from '../../store/derive';

/** Agents beat every second and the page hears of it within another: silence past this is worth saying. */
export const SILENCE_NOTICE_MS = 2500;

export interface SilentWorker {
  workerId: number;
  node: string;
  silentMs: number;
  /** The run's heartbeat timeout: when the coordinator will declare the worker failed. */
  timeoutMs: number;
}

function isLive(run: RunSnapshot): boolean {
  return run.state === 'running' || run.state === 'waiting' || run.state === 'paused';
}

/** Members of a live run that are still counted as alive but have not beaten for SILENCE_NOTICE_MS or more. */
export function silentMembers(run: RunSnapshot, workers: WorkerSnapshot[], now: number): SilentWorker[] {
  if (!isLive(run)) return [];
  const members = new Set(run.workerIds);
  return workers
    .filter((w) => members.has(w.id) && (w.state === 'active' || w.state === 'syncing') && now - w.lastHeartbeatAt >= SILENCE_NOTICE_MS)
    .map((w) => ({ workerId: w.id, node: w.node, silentMs: now - w.lastHeartbeatAt, timeoutMs: run.spec.heartbeatTimeoutMs }));
}

/** "No heartbeat from beta for 3 s — declared failed at 5 s" */
export function silenceSentence(s: SilentWorker): string {
  return `No heartbeat from ${s.node} for ${Math.floor(s.silentMs / 1000)} s — declared failed at ${Math.round(s.timeoutMs / 1000)} s`;
}

/**
 * The run's badge; a finished run that lost workers on the way says so instead of a plain green "Finished"; a
 * run relaunching after a member's loss is Recovering until the new generation's first step.
 */
export function runOutcome(run: RunSnapshot): Badge {
  if (run.state === 'running' && run.recovering) {
    return { tone: 'warn', text: 'Recovering', detail: 'a member was lost: the run relaunches and resumes from its last checkpoint' };
  }
  const offGpu = run.state === 'finished' && run.spec.useGpus ? offGpuWorkers(run.residency).length : 0;
  if (offGpu > 0) {
    return { tone: 'warn', text: 'Finished on the CPU', detail: `"Use GPUs" was asked for, but ${offGpu === 1 ? '1 worker was' : `${offGpu} workers were`} not on the GPU` };
  }
  if (run.state === 'finished' && run.workerFailures > 0) {
    const n = run.workerFailures;
    return { tone: 'warn', text: `Finished — ${n} worker${n === 1 ? '' : 's'} failed on the way`, detail: `${run.restartsUsed} of ${run.spec.maxRestarts} restarts used` };
  }
  return runBadge(run.state);
}

/** Steps done so far: the trainer prints the index of the step it just finished, counted from 0. */
export function stepsDone(progress: RunProgress | null): number | null {
  return progress ? progress.step + 1 : null;
}

/** "Step 120 of 300" (steps done; "Step 120" when the trainer does not say how many), with the bar's fraction. */
export function stepLine(progress: RunProgress | null): { text: string; fraction: number | null } {
  const done = stepsDone(progress);
  if (done === null) return { text: 'No step yet', fraction: null };
  const total = progress?.totalSteps ?? null;
  if (total === null || total <= 0) return { text: `Step ${done}`, fraction: null };
  return { text: `Step ${Math.min(done, total)} of ${total}`, fraction: Math.min(1, done / total) };
}

/**
 * While the run recovers the old generation's step is stale (the relaunch resumes from an earlier checkpoint),
 * so it is not shown as progress: "Recovering: relaunching, resumes from its last checkpoint".
 */
export function recoveringLine(): { text: string; fraction: number | null } {
  return { text: 'Recovering: relaunching, resumes from its last checkpoint', fraction: null };
}

export interface RateSample {
  generation: number;
  step: number;
  at: number;
}

/** Keeps the last minute of (step, time) samples of the current generation, for the step rate. */
export function pushRateSample(window: RateSample[], sample: RateSample, keepMs = 60_000): RateSample[] {
  const last = window.at(-1);
  if (last && last.generation === sample.generation && last.step === sample.step) return window;
  const kept = window.filter((s) => s.generation === sample.generation && sample.at - s.at <= keepMs && s.step <= sample.step);
  return [...kept, sample];
}

/**
 * Milliseconds until the last step, from the step rate seen over the recent samples of the current generation,
 * or else, in the first generation, over the run since its start (which counts its start-up too, so it errs
 * long). A relaunched generation's start-up (seconds for a few steps) would make it jump to minutes, so after a
 * relaunch it is hidden until the recent samples span 2 s; and while the run is recovering. Null when unknown.
 */
export function etaMs(run: RunSnapshot, samples: RateSample[]): number | null {
  const p = run.progress;
  if (!p || p.totalSteps === null || run.state !== 'running' || run.recovering) return null;
  const remaining = p.totalSteps - (p.step + 1);
  if (remaining <= 0) return 0;
  const first = samples[0];
  const last = samples.at(-1);
  if (first && last && last.step > first.step && last.at - first.at >= 2000) return (remaining * (last.at - first.at)) / (last.step - first.step);
  const mark = run.generationMarks.at(-1);
  if (mark && mark.generation === 1 && p.step > mark.step && p.at > mark.at) return (remaining * (p.at - mark.at)) / (p.step - mark.step);
  return null;
}

export interface WorkerLine extends RunWorkerRow {
  state: WorkerState | null;
  lastHeartbeatAt: number | null;
}

/**
 * One row per worker of the run with its live state: the coordinator's rows when it sends them, otherwise the
 * current members as the worker list knows them (a run from before the rows existed).
 */
export function runWorkerLines(run: RunSnapshot, workers: WorkerSnapshot[]): WorkerLine[] {
  const byId = new Map(workers.map((w) => [w.id, w]));
  const rows: RunWorkerRow[] = run.workerRows.length
    ? run.workerRows
    : run.workerIds.map((id) => {
        const w = byId.get(id);
        return { workerId: id, node: w?.node ?? `worker ${id}`, member: true, step: w?.step ?? null, loss: w?.loss ?? null, samplesPerSec: w?.samplesPerSec ?? null, restartsCaused: 0 };
      });
  return rows.map((row) => {
    const w = byId.get(row.workerId);
    return { ...row, state: w?.state ?? null, lastHeartbeatAt: w?.lastHeartbeatAt ?? null };
  });
}
