/**
 * The live run and its generations: started by the operator, brought in line with the active workers on
 * every change of membership (relaunch, pause, resume), charged a restart per failure incident, ended.
 *
 * Why generations instead of letting torchrun re-form by itself: torchrun notices a dead node only after its
 * rendezvous timeouts (15–40 s) and then carries on with the shard environment it was started with. We see a
 * failure at the heartbeat timeout (5 s by default), so every change of the membership starts a fresh
 * rendezvous (`<runId>-g<generation>`) with the survivors at once, each with its new shard, and the trainer
 * resumes from its checkpoint.
 */
import { randomBytes } from 'node:crypto';
import type { RunSnapshot, RunSpec } from '../../../src-shared/training';
import type { Instruction, Progress } from '../../../src-shared/worker-protocol';
import type { Clock } from '../../platform/ports';
import { ApiProblem } from './api-problem';
import type { ChangeFeed } from './change-feed';
import type { CoordinatorStore, StoredRun } from './coordinator-store';
import type { ElasticPool } from './elastic-pool';
import { launchGeneration } from './generation-launch';
import { afterFailures, expireUnstarted } from './run-failures';
import { ENDED, newRunRecord, refreshProgress, restoreRunRecord, runSnapshot, type LaunchWhy, type RunRecord } from './run-record';
import { capitalize, plural, type UserMessages } from './user-messages';
import type { WorkerRecord, WorkerRegistry } from './worker-registry';

export { START_TIMEOUT_MS } from './run-failures';
/** Runs kept (in memory, and in the state database); the oldest ended ones go first. */
export const MAX_RUNS_KEPT = 20;
/** Output lines the coordinator writes itself carry this node name and worker id. */
export const COORDINATOR_NODE = 'gpu-share';
export const COORDINATOR_OUTPUT_ID = -1;

export interface RunControllerOptions {
  clock: Clock;
  pool: ElasticPool;
  workers: WorkerRegistry;
  messages: UserMessages;
  feed: ChangeFeed;
  heartbeatIntervalMs: number;
  defaultTimeoutMs: number;
  defaultMaxWorkers: number;
  rdzvHostOverride: string | undefined;
  trustAdvertised: boolean;
}

export class RunController {
  readonly opts: RunControllerOptions;
  private readonly runList: RunRecord[] = [];
  private liveRun: RunRecord | null = null;
  private runSeq = 0;
  /** Monotonic ms at which a settled scale-up is due (joins are batched for one heartbeat interval). */
  private reconcileDueAt: number | null = null;
  /** Where runs and their output are kept across restarts; null in tests that do not need it. */
  store: CoordinatorStore | null = null;

  constructor(opts: RunControllerOptions) {
    this.opts = opts;
  }

  get live(): RunRecord | null {
    return this.liveRun;
  }

  find(runId: string): RunRecord | undefined {
    return this.runList.find((r) => r.id === runId);
  }

  startRun(spec: RunSpec): RunSnapshot {
    const live = this.liveRun;
    if (live) throw new ApiProblem(409, `run "${live.spec.name}" (${live.id}) is still ${live.state}; stop it before starting another`);
    if (spec.minWorkers > spec.maxWorkers) {
      throw new ApiProblem(422, `minWorkers (${spec.minWorkers}) is more than maxWorkers (${spec.maxWorkers})`);
    }
    const run = newRunRecord(`run-${++this.runSeq}-${randomBytes(3).toString('hex')}`, spec, this.opts.clock.now(), () => this.opts.clock.now());
    this.store?.saveRunSeq(this.runSeq);
    this.runList.push(run);
    this.trimRuns();
    this.liveRun = run;
    this.opts.pool.setLimits({ minWorkers: spec.minWorkers, maxWorkers: spec.maxWorkers, heartbeatTimeoutMs: spec.heartbeatTimeoutMs });
    this.opts.messages.event('run-started', 'info', `Run "${spec.name}" started: ${plural(spec.samples, 'sample')}, ${spec.minWorkers}–${spec.maxWorkers} workers`, { runId: run.id });
    this.setWaitingCause(run);
    const syncing = this.opts.pool.allWorkers().some((w) => w.state === 'syncing');
    // Someone about to become active gets one heartbeat interval, rather than a relaunch right after the start.
    if (syncing) this.scheduleReconcile();
    else this.reconcile(run, 'run started', 'start');
    this.emitRun(run);
    return this.snapshot(run);
  }

  stopRun(runId: string): RunSnapshot {
    const run = this.find(runId);
    if (!run) throw new ApiProblem(404, `no run "${runId}" (see GET /v1/runs for the runs this coordinator knows)`);
    if (ENDED.has(run.state)) return this.snapshot(run);
    this.stopMembers(run, 'run stopped by user');
    this.endRun(run, 'stopped', 'stopped by user');
    this.opts.messages.event('run-stopped', 'info', `Run "${run.spec.name}" stopped by user`, { runId: run.id, generation: run.generation });
    return this.snapshot(run);
  }

  /**
   * Runs kept from before a restart. The one that was live goes on, paused (or waiting) until its workers join
   * again: then it resumes as a new generation, from the trainers' checkpoint, without charging a restart.
   */
  restore(stored: StoredRun[], runSeq: number): void {
    this.runSeq = Math.max(this.runSeq, runSeq);
    for (const { run: snapshot, outputTail } of stored) {
      const run = restoreRunRecord(snapshot, outputTail, () => this.opts.clock.now());
      this.runList.push(run);
      if (ENDED.has(run.state)) continue;
      if (this.liveRun) {
        run.state = 'failed';
        run.stateCause = `the coordinator restarted while run ${this.liveRun.id} was also live`;
        run.endedAt = this.opts.clock.now();
        continue;
      }
      this.liveRun = run;
      run.state = run.generation > 0 ? 'paused' : 'waiting';
      run.stateCause = 'the coordinator restarted: waiting for its workers to join again';
      const { spec } = run;
      this.opts.pool.setLimits({ minWorkers: spec.minWorkers, maxWorkers: spec.maxWorkers, heartbeatTimeoutMs: spec.heartbeatTimeoutMs });
      this.say(run, 'the coordinator restarted; the run goes on from its checkpoint when its workers join again');
      this.opts.messages.event('run-paused', 'warning', `Run "${spec.name}" is waiting: the coordinator restarted; it resumes when its workers join again`, { runId: run.id, generation: run.generation });
    }
    this.trimRuns();
    for (const run of this.runList) this.store?.saveRun(this.snapshot(run));
  }

  runs(): RunSnapshot[] {
    return this.runList.map((r) => this.snapshot(r));
  }

  snapshot(run: RunRecord): RunSnapshot {
    this.refresh(run);
    return runSnapshot(run);
  }

  /** Relaunches, scales up or resumes when due; fails members that never started. Called every tick. */
  tick(): void {
    const run = this.liveRun;
    if (!run) return;
    expireUnstarted(this, run);
    if (run.pendingRestart) this.maybeRestart(run);
    if (this.reconcileDueAt !== null && this.opts.clock.monotonic() >= this.reconcileDueAt) {
      this.reconcileDueAt = null;
      this.reconcile(run, 'workers joined', run.state === 'paused' ? 'resume' : run.state === 'running' ? 'scale' : 'start');
    }
  }

  /** A join or activation settles for one heartbeat interval before the run grows. */
  scheduleReconcile(): void {
    if (!this.liveRun) return;
    this.reconcileDueAt = this.opts.clock.monotonic() + this.opts.heartbeatIntervalMs;
  }

  /** A member of the live generation left or was drained: the run shrinks. */
  memberGone(workerId: number, cause: string): void {
    const run = this.liveRun;
    if (run && run.workerIds.includes(workerId)) this.reconcile(run, cause, 'shrink');
  }

  /** The worker proved it is alive (heartbeat or report): a relaunch waiting for it may go. */
  provedAlive(workerId: number): void {
    const run = this.liveRun;
    if (run?.pendingRestart?.waitingFor.delete(workerId)) this.maybeRestart(run);
  }

  recordProgress(rec: WorkerRecord, progress: Progress): void {
    const run = this.liveRun;
    if (!run || run.state !== 'running' || progress.runId !== run.id || progress.generation !== run.generation) return;
    if (!run.members.has(rec.id)) return;
    run.telemetry.onHeartbeatProgress(rec.id, rec.node, progress);
    this.progressed(run);
  }

  /** The run's progress changed: recomputed and sent at most once a second. */
  progressed(run: RunRecord): void {
    run.progressStale = true;
    this.opts.feed.runProgressed(run.id);
  }

  /** Remembers when each start of the live generation was first handed out, for expireUnstarted(). */
  noteStartsHandedOut(rec: WorkerRecord, instructions: Instruction[]): void {
    const run = this.liveRun;
    if (!run || run.state !== 'running') return;
    for (const i of instructions) {
      if (i.kind !== 'start' || i.plan.runId !== run.id || i.plan.generation !== run.generation) continue;
      const member = run.members.get(rec.id);
      if (member && member.startSentAt === null) member.startSentAt = this.opts.clock.monotonic();
    }
  }

  /** See run-failures.ts. */
  afterFailures(failedIds: number[], notifyCauses: Map<number, string>, runCause?: string): void {
    afterFailures(this, failedIds, notifyCauses, runCause);
  }

  /** Brings the live run in line with the active set: relaunch, pause or resume. */
  reconcile(run: RunRecord, cause: string, why: LaunchWhy, force = false): void {
    if (this.liveRun !== run) return;
    const members = this.eligible(run);
    const min = run.spec.minWorkers;
    if (run.state === 'running') {
      const same = members.length === run.workerIds.length && members.every((id, i) => run.workerIds[i] === id);
      if (!same || force) {
        if (members.length < min) this.pauseRun(run, members.length);
        else launchGeneration(this, run, members, cause, why);
      }
    } else if (run.state === 'waiting' || run.state === 'paused') {
      if (members.length >= min) {
        launchGeneration(this, run, members, cause, run.state === 'paused' ? 'resume' : why);
      } else {
        const before = run.stateCause;
        if (run.state === 'paused') run.stateCause = `${members.length} of ${min} workers active (min_workers ${min})`;
        else this.setWaitingCause(run);
        if (run.stateCause !== before) this.emitRun(run);
      }
    }
    this.reconcileDueAt = null;
  }

  /** Relaunches a failed generation once every other member is known alive (or the wait has outlasted the timeout). */
  maybeRestart(run: RunRecord): void {
    const pending = run.pendingRestart;
    if (!pending || this.liveRun !== run || run.state !== 'running') return;
    const waited = this.opts.clock.monotonic() - pending.since;
    if (pending.waitingFor.size > 0 && waited <= this.opts.pool.getLimits().heartbeatTimeoutMs) return;
    this.reconcile(run, pending.cause, 'restart', true);
  }

  /** No member can host the rendezvous for all: the run waits, saying why, instead of burning its restarts. */
  holdRun(run: RunRecord, reason: string): void {
    this.stopMembers(run, `run waiting: ${reason}`);
    const changed = run.stateCause !== reason;
    run.state = run.generation > 0 ? 'paused' : 'waiting';
    run.stateCause = reason;
    run.pendingRestart = null;
    run.workerIds = [];
    run.members = new Map();
    if (changed) {
      this.say(run, `waiting: ${reason}`);
      this.opts.messages.event('run-paused', 'warning', `Run "${run.spec.name}" cannot start its next generation: ${reason}`, { runId: run.id, generation: run.generation });
      this.opts.messages.notify(`Run "${run.spec.name}" is waiting`, `${capitalize(reason)}.`, 'warning', { view: 'runs', runId: run.id });
    }
    this.emitRun(run);
  }

  /** Tells the current generation's members that are still reachable to stop it. */
  stopMembers(run: RunRecord, reason: string): void {
    if (run.state !== 'running') return;
    for (const id of run.workerIds) {
      const pw = this.opts.pool.worker(id);
      const rec = this.opts.workers.get(id);
      if (!pw || !rec || (pw.state !== 'active' && pw.state !== 'syncing')) continue;
      if (run.members.get(id)?.exit) continue; // its process has already ended
      rec.mailbox.queueStop(run.id, run.generation, reason);
    }
  }

  failRun(run: RunRecord, cause: string): void {
    this.stopMembers(run, `run failed: ${cause}`);
    this.endRun(run, 'failed', cause);
    this.opts.messages.event('run-failed', 'error', `Run "${run.spec.name}" failed: ${cause}`, { runId: run.id, generation: run.generation });
    this.say(run, `run failed: ${cause}`);
    this.opts.messages.notify(`Run "${run.spec.name}" failed`, `${capitalize(cause)}.`, 'error', { view: 'runs', runId: run.id });
  }

  finishRun(run: RunRecord): void {
    this.refresh(run);
    const step = run.progress?.step;
    const n = run.workerIds.length;
    this.endRun(run, 'finished', `${n === 1 ? 'its worker' : `all ${n} workers`} finished (exit code 0)`);
    const loss = run.progress?.loss;
    const detail = [step !== undefined ? `step ${step}` : null, loss !== null && loss !== undefined ? `loss ${loss.toPrecision(4)}` : null, plural(run.restartsUsed, 'restart') + ' used']
      .filter(Boolean)
      .join(', ');
    this.opts.messages.event('run-finished', 'info', `Run "${run.spec.name}" finished: ${detail}`, { runId: run.id, generation: run.generation });
    this.say(run, `finished: ${detail}`);
    this.opts.messages.notify(`Run "${run.spec.name}" finished`, `${capitalize(detail)}.`, 'info', { view: 'runs', runId: run.id });
  }

  /** Folds members' progress into the run's (see run-record.ts) and keeps the pool's step in line. */
  refresh(run: RunRecord): void {
    const step = refreshProgress(run);
    if (step !== null && this.liveRun === run) this.opts.pool.setStep(step);
  }

  /**
   * A line from the coordinator itself in the run's output (`[gpu-share] relaunching as generation 2 …`), so
   * the output says what happened to the run between the trainers' lines.
   */
  say(run: RunRecord, text: string): void {
    const data = `${text}\r\n`;
    run.output.append(COORDINATOR_OUTPUT_ID, COORDINATOR_NODE, data);
    this.store?.appendOutput(run.id, COORDINATOR_OUTPUT_ID, COORDINATOR_NODE, data);
    this.opts.feed.broadcast({ type: 'output', runId: run.id, workerId: COORDINATOR_OUTPUT_ID, node: COORDINATOR_NODE, data });
  }

  emitRun(run: RunRecord): void {
    this.opts.feed.runSent(run.id);
    if (!this.opts.feed.hasListeners && !this.store) return;
    const snapshot = this.snapshot(run);
    this.store?.saveRun(snapshot);
    this.opts.feed.broadcast({ type: 'run', run: snapshot });
  }

  /** Workers of the live run's next generation: active ones able to run it, in join order, at most max_workers. */
  private eligible(run: RunRecord): number[] {
    return this.opts.pool
      .activeWorkerIds()
      .filter((id) => run.spec.launcher === 'direct' || this.opts.workers.get(id)!.hasTorch)
      .slice(0, run.spec.maxWorkers);
  }

  private pauseRun(run: RunRecord, eligibleCount: number): void {
    this.stopMembers(run, 'run paused: below min_workers');
    const min = run.spec.minWorkers;
    run.state = 'paused';
    run.pendingRestart = null;
    run.stateCause = `${eligibleCount} of ${min} workers active (min_workers ${min})`;
    run.workerIds = [];
    run.members = new Map();
    this.opts.messages.event('run-paused', 'warning', `Run "${run.spec.name}" paused: ${run.stateCause}`, { runId: run.id, generation: run.generation });
    this.say(run, `paused: ${run.stateCause}; it resumes when enough workers are back`);
    this.opts.messages.notify(`Run "${run.spec.name}" paused`, `${capitalize(run.stateCause)}. It resumes when enough workers are back.`, 'warning', { view: 'runs', runId: run.id });
    this.emitRun(run);
  }

  private setWaitingCause(run: RunRecord): void {
    const active = this.opts.pool.activeCount();
    const able = this.eligible(run).length;
    const min = run.spec.minWorkers;
    run.stateCause =
      able < active
        ? `waiting for workers: ${able} of ${min} needed can run it (${active - able} active without Python+torch)`
        : `waiting for workers: ${able} of ${min} active (min_workers ${min})`;
  }

  private endRun(run: RunRecord, state: 'finished' | 'failed' | 'stopped', cause: string): void {
    this.refresh(run);
    run.state = state;
    run.stateCause = cause;
    run.pendingRestart = null;
    run.endedAt = this.opts.clock.now();
    run.workerIds = [];
    run.members = new Map();
    if (this.liveRun === run) {
      this.liveRun = null;
      this.reconcileDueAt = null;
      const o = this.opts;
      o.pool.setLimits({ minWorkers: 1, maxWorkers: o.defaultMaxWorkers, heartbeatTimeoutMs: o.defaultTimeoutMs });
    }
    this.emitRun(run);
  }

  private trimRuns(): void {
    while (this.runList.length > MAX_RUNS_KEPT) {
      const i = this.runList.findIndex((r) => ENDED.has(r.state));
      if (i === -1) break;
      this.runList.splice(i, 1);
    }
  }
}
