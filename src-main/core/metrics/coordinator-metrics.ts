/**
 * The coordinator's metric families, from its worker and run snapshots. Every state gets a sample (zero
 * included), so a dashboard's "failed workers" panel reads 0 instead of "no data". docs/metrics.md lists them.
 */
import type { RunSnapshot, RunState, WorkerSnapshot, WorkerState } from '../../../src-shared/training';
import { family, type Labels, type MetricFamily } from './exposition';

const WORKER_STATES: readonly WorkerState[] = ['syncing', 'active', 'draining', 'failed', 'left'];
const RUN_STATES: readonly RunState[] = ['waiting', 'running', 'paused', 'finished', 'failed', 'stopped'];
/** Runs that still train or will: their step, speed and generation are current. */
const LIVE_RUN_STATES: ReadonlySet<RunState> = new Set(['waiting', 'running', 'paused']);

export interface CoordinatorMetricsInput {
  workers: readonly WorkerSnapshot[];
  runs: readonly RunSnapshot[];
  /** Epoch ms, the clock heartbeats are stamped with. */
  now: number;
}

export function workerFamilies({ workers, now }: CoordinatorMetricsInput): MetricFamily[] {
  const id = (w: WorkerSnapshot): Labels => ({ worker_id: w.id, node: w.node });
  // A worker that left says no more; its heartbeat age would only grow.
  const present = workers.filter((w) => w.state !== 'left');
  return [
    family(
      'gpu_share_workers',
      'gauge',
      'Workers known to the coordinator, by state.',
      WORKER_STATES.map((state) => [{ state }, workers.filter((w) => w.state === state).length]),
    ),
    family(
      'gpu_share_worker_info',
      'gauge',
      'One per worker (always 1), carrying its state, backend and whether it runs inside the app.',
      workers.map((w) => [{ ...id(w), state: w.state, backend: w.backend, local: w.local }, 1]),
    ),
    family(
      'gpu_share_worker_heartbeat_age_seconds',
      'gauge',
      'Seconds since the worker last heartbeated (workers that left are not listed).',
      present.map((w) => [id(w), Math.max(0, now - w.lastHeartbeatAt) / 1000]),
    ),
    family('gpu_share_worker_step', 'gauge', 'Training step the worker last reported.', workers.map((w) => [id(w), w.step])),
    family(
      'gpu_share_worker_samples_per_second',
      'gauge',
      'Training throughput the worker last reported, samples per second.',
      workers.map((w) => [id(w), w.samplesPerSec]),
    ),
  ];
}

export function runFamilies({ runs }: CoordinatorMetricsInput): MetricFamily[] {
  const live = runs.filter((r) => LIVE_RUN_STATES.has(r.state));
  const id = (r: RunSnapshot): Labels => ({ run: r.id });
  return [
    family('gpu_share_runs', 'gauge', 'Runs the coordinator keeps, by state.', RUN_STATES.map((state) => [{ state }, runs.filter((r) => r.state === state).length])),
    family('gpu_share_run_info', 'gauge', 'One per kept run (always 1), carrying its name and state.', runs.map((r) => [{ run: r.id, name: r.spec.name, state: r.state }, 1])),
    family('gpu_share_run_step', 'gauge', 'Latest training step of a waiting, running or paused run.', live.map((r) => [id(r), r.progress?.step ?? null])),
    family(
      'gpu_share_run_total_steps',
      'gauge',
      'Steps the trainer said it will take in all, for a live run whose trainer said so.',
      live.map((r) => [id(r), r.progress?.totalSteps ?? null]),
    ),
    family(
      'gpu_share_run_samples_per_second',
      'gauge',
      'Latest throughput of a live run, samples per second summed over its workers.',
      live.map((r) => [id(r), r.progress?.samplesPerSec ?? null]),
    ),
    family('gpu_share_run_generation', 'gauge', 'Generation of a live run (1, then one more per relaunch).', live.map((r) => [id(r), r.generation])),
    family('gpu_share_run_workers', 'gauge', 'Workers taking part in the current generation of a live run.', live.map((r) => [id(r), r.workerIds.length])),
    family(
      'gpu_share_run_restarts_allowed',
      'gauge',
      'Restarts after failures a live run may use before it is marked failed (its max_restarts).',
      live.map((r) => [id(r), r.spec.maxRestarts]),
    ),
    family('gpu_share_run_restarts_total', 'counter', 'Restarts after worker failures the run has used.', runs.map((r) => [id(r), r.restartsUsed])),
    family(
      'gpu_share_run_worker_failures_total',
      'counter',
      'Workers that failed while the run was live.',
      runs.map((r) => [id(r), r.workerFailures]),
    ),
  ];
}
