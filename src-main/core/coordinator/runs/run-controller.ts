/**
 * The cluster's runs, several at once, each its own group: its generations, shards, rendezvous, restarts, output
 * and events. Started by the operator; each re-planned (planGeneration, generation-plan.ts) on every change that can
 * move it — a member failing or leaving, a worker joining, capacity freeing — and brought in line by the applier
 * (run-applier.ts): relaunch, pause, resume, grow, end. A change reaches only the runs it concerns: a member
 * failing relaunches the runs it is in and no other.
 *
 * Why generations instead of letting torchrun re-form by itself: torchrun notices a dead node only after its
 * rendezvous timeouts (15–40 s) and then carries on with the shard environment it was started with. We see a
 * failure at the heartbeat timeout (5 s by default), so every change of the membership starts a fresh
 * rendezvous (`<runId>-g<generation>`) with the survivors at once, each with its new shard, and the trainer
 * resumes from its checkpoint.
 */
import { randomBytes } from 'node:crypto';
import { noGpuReason } from '../../../../src-shared/runs/gpu-request';
import { commSpecProblem, describeStrategy } from '../../../../src-shared/scheduling/comm-choice';
import type { LinkMeasurement } from '../../../../src-shared/links/link-matrix';
import type { RunArtifact, RunProject, RunSnapshot, RunSpec } from '../../../../src-shared/training';
import type { Instruction, Progress, Report } from '../../../../src-shared/worker-protocol';
import type { Clock } from '../../../platform/ports';
import { ApiProblem, type ChangeFeed, type CoordinatorStore, type JobCapacity, plural, type StoredRun, type UserMessages } from '../common';
import type { MemberRecord, Membership } from '../membership';
import { recheckComm, rememberRestored } from './generation-comm';
import type { OutputBudget } from './output-budget';
import { planGeneration } from './generation-plan';
import { RunApplier, type RunApplierDeps } from './run-applier';
import { afterFailures, expireUnstarted, type RunFailureContext } from './run-failures';
import { askToPrepare, initProject, notReadyReason, onPrepared, retryFailedPrepares, type ProjectFiles } from './run-project-gate';
import { generationInput, jobHoldingsKey, samePlan } from './run-placement';
import { resumeDuringGrace, type RunReattachContext } from './run-reattach';
import { clearMembers, copyProject, ENDED, wantsMore, newRunRecord, restoreRunRecord, runSnapshot, type LaunchWhy, type RunRecord } from './run-record';
import { handleReport, type RunReportContext } from './run-reports';
import { snapshotPeers } from '../links';

export { START_TIMEOUT_MS } from './run-failures';
export { COORDINATOR_NODE, COORDINATOR_OUTPUT_ID } from './run-applier';
/** Runs kept (in memory, and in the state database); the oldest ended ones go first. */
export const MAX_RUNS_KEPT = 20;
/** Runs live (waiting, running or paused) at once: each is re-planned on every change, so their number is bounded. */
export const MAX_LIVE_RUNS = 32;

export interface RunControllerOptions {
  clock: Clock;
  pool: Membership;
  messages: UserMessages;
  feed: ChangeFeed;
  heartbeatIntervalMs: number;
  /** The cluster's heartbeat timeout: how long a relaunch waits for the other members' proof of life at most. */
  heartbeatTimeoutMs: () => number;
  /** What jobs hold (the job service's hook); null without a job service. */
  capacity: () => JobCapacity | null;
  rdzvHostOverride: string | undefined;
  trustAdvertised: boolean;
  /** The measured links (the coordinator's LinkBook), for each generation's ring order and comm strategy. */
  links?: () => readonly LinkMeasurement[];
  /** What earlier runs of a trainer reported about its step, and re-measuring a forming ring's stale links. */
  stepMemory?: RunApplierDeps['stepMemory'];
  surveyLinks?: RunApplierDeps['surveyLinks'];
  /** The coordinator's project store (attachProjectFiles): a project run's requirements.txt and data files, snapshots' overlap (run-project-gate.ts, snapshot-peers.ts). */
  files?: ProjectFiles | null;
}


export class RunController {
  private readonly opts: RunControllerOptions;
  private readonly applier: RunApplier;
  private readonly runList: RunRecord[] = [];
  private runSeq = 0;
  private store: CoordinatorStore | null = null;
  /** What jobs held when last looked at (run-placement.ts jobHoldingsKey), and when to look again. */
  private jobsSeen = '';
  private jobsCheckDueAt = 0;
  private readonly failureCtx: RunFailureContext;
  private readonly reportCtx: RunReportContext;
  private readonly reattachCtx: RunReattachContext;

  constructor(opts: RunControllerOptions) {
    this.opts = { ...opts }; // its own copy: attachProjectFiles sets `files` on it
    const { clock, pool, messages, feed } = opts;
    this.applier = new RunApplier({
      clock, pool, messages, feed,
      rdzvHostOverride: opts.rdzvHostOverride, trustAdvertised: opts.trustAdvertised, links: opts.links,
      stepMemory: opts.stepMemory,
      surveyLinks: opts.surveyLinks,
      // What it held is free: runs below max_workers may grow into it (after the settle, as for a join).
      onReleased: () => this.scheduleReconcile(),
    });
    const applier = this.applier;
    const reconcile = (run: RunRecord, cause: string, why: LaunchWhy, force: boolean) => this.reconcile(run, cause, why, force);
    this.failureCtx = { clock, pool, feed, messages, applier, liveRuns: () => this.liveRuns(), reconcile };
    const settleSoon = (run: RunRecord): void => void (run.reconcileDueAt ??= clock.monotonic() + opts.heartbeatIntervalMs);
    const readiness = { say: applier.say.bind(applier), emit: applier.emit.bind(applier), reconcile: (run: RunRecord, cause: string, why: LaunchWhy) => this.reconcile(run, cause, why), settleSoon };
    this.reportCtx = {
      clock, pool, feed, messages, applier,
      find: (runId) => this.find(runId),
      progressed: (run) => this.progressed(run),
      maybeRestart: (run) => this.maybeRestart(run),
      prepared: (run, rec, report) => onPrepared(readiness, run, rec, report),
    };
    this.reattachCtx = { opts: { messages, pool }, say: (run, text) => applier.say(run, text), find: (runId) => this.find(runId) };
  }

  /** From now on runs and their output are kept in `store` as they change. */
  attachStore(store: CoordinatorStore): void {
    this.store = store;
    this.applier.attachStore(store);
  }

  /** From now on project runs read their requirements.txt and data files from `files` (the project store). */
  attachProjectFiles(files: ProjectFiles): void {
    this.opts.files = files;
    for (const run of this.liveRuns()) initProject(run, files);
  }

  /** The run with this id (live or kept), for the coordinator's own use (reports, re-attach claims). */
  find(runId: string): RunRecord | undefined { return this.runList.find((r) => r.id === runId); }

  /** Whom a job's worker fetches `snapshot` from (snapshot-peers.ts): `holderIds` and the live runs' members told to prepare it. */
  snapshotPeers(fetcherId: number, snapshot: string, holderIds: Iterable<number>) { return snapshotPeers(this.opts, fetcherId, snapshot, [...holderIds, ...this.liveRuns().flatMap((r) => (r.project?.snapshot === snapshot ? r.project.members.map((m) => m.workerId) : []))]); }

  /** Worker ids that are members of some live run's current generation. */
  memberIds(): Set<number> {
    return new Set(this.liveRuns().flatMap((r) => r.workerIds));
  }

  /** A short key of which workers train which run: it changes exactly when runs take or free machines. */
  membersKey(): string {
    return this.liveRuns()
      .filter((r) => r.state === 'running')
      .map((r) => `${r.id}:${r.workerIds.join('.')}`)
      .join(',');
  }

  /** The live runs whose current generation `workerId` is a member of (what a re-attach says goes on). */
  memberRuns(workerId: number): { id: string; name: string; generation: number }[] {
    return this.liveRuns()
      .filter((r) => r.workerIds.includes(workerId))
      .map((r) => ({ id: r.id, name: r.spec.name, generation: r.generation }));
  }

  /** `project`: the run's snapshot, taken before (projects/run-project.ts); absent for a plain command. */
  startRun(spec: RunSpec, project?: RunProject): RunSnapshot {
    if (spec.minWorkers > spec.maxWorkers) {
      throw new ApiProblem(422, `minWorkers (${spec.minWorkers}) is more than maxWorkers (${spec.maxWorkers})`);
    }
    const commProblem = commSpecProblem(spec);
    if (commProblem) throw new ApiProblem(400, `${commProblem.path}: ${commProblem.message}`);
    const noGpu = spec.useGpus ? noGpuReason(this.opts.pool.allWorkers()) : null;
    if (noGpu) throw new ApiProblem(422, `useGpus: ${noGpu}`);
    const live = this.liveRuns().length;
    if (live >= MAX_LIVE_RUNS) {
      throw new ApiProblem(409, `${live} runs are live, the most this coordinator takes at once; stop one (gpu-share runs stop ID) before starting another`);
    }
    const run = newRunRecord(`run-${++this.runSeq}-${randomBytes(3).toString('hex')}`, spec, this.opts.clock.now(), () => this.opts.clock.now());
    if (project) run.project = { ...copyProject(project), members: [] };
    initProject(run, this.opts.files ?? null);
    this.store?.saveRunSeq(this.runSeq);
    this.runList.push(run);
    this.trimRuns();
    // The run's row exists before anything is said in its output: output kept for a run the database does not
    // hold yet is dropped, and a restart then lost the first lines ("launching generation 1 …").
    this.store?.saveRun(this.snapshot(run));
    this.opts.messages.event('run-started', 'info', `Run "${spec.name}" started: ${plural(spec.samples, 'sample')}, ${spec.minWorkers}–${spec.maxWorkers} workers`, { runId: run.id });
    const syncing = this.opts.pool.allWorkers().some((w) => w.state === 'syncing');
    // Someone about to become active gets one heartbeat interval, rather than a relaunch right after the start.
    this.reconcile(run, 'run started', 'start', false, syncing);
    if (syncing) run.reconcileDueAt = this.opts.clock.monotonic() + this.opts.heartbeatIntervalMs;
    this.applier.emit(run);
    return this.snapshot(run);
  }

  stopRun(runId: string): RunSnapshot {
    const run = this.find(runId);
    if (!run) throw new ApiProblem(404, `no run "${runId}" (see GET /v1/runs for the runs this coordinator knows)`);
    if (ENDED.has(run.state)) return this.snapshot(run);
    this.applier.stopMembers(run, 'run stopped by user');
    this.applier.end(run, 'stopped', 'stopped by user');
    this.opts.messages.event('run-stopped', 'info', `Run "${run.spec.name}" stopped by user`, { runId: run.id, generation: run.generation });
    return this.snapshot(run);
  }

  /** Forgets an ended run here and in the store (its output, loss and shard maps go with it); a live one is refused. */
  deleteRun(runId: string): { deleted: string } {
    const run = this.find(runId);
    if (!run) throw new ApiProblem(404, `no run "${runId}" (see GET /v1/runs for the runs this coordinator knows)`);
    if (!ENDED.has(run.state)) {
      throw new ApiProblem(409, `run "${run.spec.name}" (${run.id}) is ${run.state}: stop it first (gpu-share runs stop ${run.id}, or Stop in the Runs view), then delete it`);
    }
    this.runList.splice(this.runList.indexOf(run), 1);
    this.store?.deleteRun?.(run.id);
    this.opts.feed.broadcast({ type: 'runDeleted', runId: run.id });
    return { deleted: run.id };
  }

  /**
   * Runs kept from before a restart. Each one that was running goes on in its generation when all its members are
   * in the failover grace (run-reattach.ts); otherwise it waits, paused, until its workers join again: then it
   * resumes as a new generation, from the trainers' checkpoint, without charging a restart.
   */
  restore(stored: StoredRun[], runSeq: number, grace: { workers: ReadonlySet<number>; ms: number } = { workers: new Set(), ms: 0 }): void {
    this.runSeq = Math.max(this.runSeq, runSeq);
    for (const { run: snapshot, outputTail, outputTimes } of stored) {
      const run = restoreRunRecord(snapshot, outputTail, () => this.opts.clock.now(), outputTimes);
      if (run.project && !ENDED.has(run.state)) initProject(run, this.opts.files ?? null);
      rememberRestored(this.opts, run); // its trainer's step and measured comm_s, for later runs of it
      this.runList.push(run);
      if (ENDED.has(run.state)) continue;
      if (resumeDuringGrace(this.reattachCtx, run, snapshot.memberHoldings, grace.workers, grace.ms)) continue; // its members re-attach (run-reattach.ts)
      clearMembers(run);
      run.state = run.generation > 0 ? 'paused' : 'waiting';
      run.stateCause = 'the coordinator restarted: waiting for its workers to join again';
      this.applier.say(run, 'the coordinator restarted; the run goes on from its checkpoint when its workers join again');
      this.opts.messages.event('run-paused', 'warning', `Run "${run.spec.name}" is waiting: the coordinator restarted; it resumes when its workers join again`, { runId: run.id, generation: run.generation });
    }
    this.trimRuns();
    for (const run of this.runList) this.store?.saveRun(this.snapshot(run));
  }

  runs(): RunSnapshot[] {
    return this.runList.map((r) => this.snapshot(r));
  }

  /** The run's recent output, every line prefixed with its node ('' for a run it does not know), and its lines' times. */
  output(runId: string): string { return this.find(runId)?.output.text() ?? ''; }
  outputTimes(runId: string): (number | null)[] { return this.find(runId)?.output.times() ?? []; }

  /** The run's result is in the artifact store: shown and kept with the run. */
  setArtifact(runId: string, artifact: RunArtifact): RunSnapshot {
    const run = this.find(runId);
    if (!run) throw new ApiProblem(404, `no run "${runId}" (see GET /v1/runs for the runs this coordinator knows)`);
    run.artifact = { ...artifact };
    this.applier.emit(run);
    return this.snapshot(run);
  }

  /** Sends the run's snapshot now (the change feed's coalesced flush); false for a run no longer kept. */
  emitRun(runId: string): boolean {
    const run = this.find(runId);
    if (run) this.applier.emit(run);
    return run !== undefined;
  }

  /** Relaunches, grows or resumes runs when due; fails members that never started. Called every tick. */
  tick(): void {
    const now = this.opts.clock.monotonic();
    for (const run of this.liveRuns()) {
      expireUnstarted(this.failureCtx, run);
      if (retryFailedPrepares(this.opts, run)) this.applier.emit(run);
      if (run.heldStarts) this.applier.releaseHeldStarts(run, false);
      if (run.pendingRestart) this.maybeRestart(run);
      // A generation decided blind, or on links measured again since, relaunches when its numbers call for less traffic.
      const comm = recheckComm(this.opts, run);
      if (comm) this.reconcile(run, `the trainer's step and the measured links call for ${describeStrategy(comm)}`, 'scale', true);
      if (run.reconcileDueAt !== null && now >= run.reconcileDueAt) {
        run.reconcileDueAt = null;
        this.reconcile(run, 'workers joined', run.state === 'paused' ? 'resume' : run.state === 'running' ? 'scale' : 'start');
      }
    }
    this.watchJobs(now);
  }

  /** A join or activation settles for one heartbeat interval before the runs that could use it grow. */
  scheduleReconcile(): void {
    const due = this.opts.clock.monotonic() + this.opts.heartbeatIntervalMs;
    for (const run of this.liveRuns()) {
      // A project run's newcomer starts preparing now, so it is ready (or says why not) when the run could use it.
      if (askToPrepare(this.opts, run)) this.applier.emit(run);
      if (wantsMore(run)) run.reconcileDueAt = due;
    }
  }

  /** A worker left or was drained: every run it was a member of shrinks. */
  memberGone(workerId: number, cause: string): void {
    for (const run of this.liveRuns()) if (run.workerIds.includes(workerId)) this.reconcile(run, cause, 'shrink');
  }

  /** The worker proved it is alive (heartbeat or report): a relaunch waiting for it may go. */
  provedAlive(workerId: number): void {
    for (const run of this.liveRuns()) if (run.pendingRestart?.waitingFor.delete(workerId)) this.maybeRestart(run);
  }

  recordProgress(rec: MemberRecord, progress: Progress): void {
    const run = this.find(progress.runId);
    if (!run || run.state !== 'running' || progress.generation !== run.generation || !run.members.has(rec.id)) return;
    run.telemetry.onHeartbeatProgress(rec.id, rec.node, progress);
    this.progressed(run);
  }

  /** Remembers when each start of a run's current generation was first handed out, for expireUnstarted(). */
  noteStartsHandedOut(rec: MemberRecord, instructions: Instruction[]): void {
    for (const i of instructions) {
      if (i.kind !== 'start') continue;
      const run = this.find(i.plan.runId);
      if (!run || run.state !== 'running' || i.plan.generation !== run.generation) continue;
      const member = run.members.get(rec.id);
      if (member && member.startSentAt === null) member.startSentAt = this.opts.clock.monotonic();
    }
  }

  /** Workers were declared failed: the runs they were members of relaunch, pause or fail (run-failures.ts). */
  afterFailures(failedIds: number[], notifyCauses: Map<number, string>, runCause?: string): void {
    afterFailures(this.failureCtx, failedIds, notifyCauses, runCause);
  }

  /** A report from an agent about the run it trains (run-reports.ts). */
  handleReport(budget: OutputBudget, rec: MemberRecord, report: Report): void {
    handleReport(this.reportCtx, budget, rec, report);
  }

  private liveRuns(): RunRecord[] {
    return this.runList.filter((r) => !ENDED.has(r.state));
  }

  private snapshot(run: RunRecord): RunSnapshot {
    this.applier.refresh(run);
    return runSnapshot(run);
  }

  /** The run's progress changed: recomputed and sent at most once a second. */
  private progressed(run: RunRecord): void {
    run.progressStale = true;
    this.opts.feed.runProgressed(run.id);
  }

  /**
   * Brings one run in line with what it may have now (planGeneration): relaunch with the planned generation, grow,
   * pause below min_workers, resume. `quiet`: only say why it waits (a start that lets a syncing worker settle).
   */
  private reconcile(run: RunRecord, cause: string, why: LaunchWhy, force = false, quiet = false): void {
    if (ENDED.has(run.state)) return;
    run.reconcileDueAt = null;
    askToPrepare(this.opts, run);
    const decision = planGeneration(generationInput(this.opts, run, this.liveRuns(), cause, notReadyReason));
    const members = decision.kind === 'launch' ? decision.plan.members : decision.members;
    const placed = decision.kind === 'launch' || decision.on === 'store';
    if (run.state === 'running') {
      if (!placed) this.applier.pause(run, decision.reason);
      else if (force || !samePlan(run, members)) this.applier.apply(run, decision, why);
    } else if (placed && !quiet) {
      this.applier.apply(run, decision, run.state === 'paused' ? 'resume' : why);
    } else {
      this.applier.waitingCause(run, !placed ? decision.reason : `waits one heartbeat interval for the workers still joining (${plural(members.length, 'worker')} could train it now)`);
    }
  }

  /** Relaunches a failed generation once every other member is known alive (or the wait has outlasted the timeout). */
  private maybeRestart(run: RunRecord): void {
    const pending = run.pendingRestart;
    if (!pending || run.state !== 'running') return;
    const waited = this.opts.clock.monotonic() - pending.since;
    if (pending.waitingFor.size > 0 && waited <= this.opts.heartbeatTimeoutMs()) return;
    this.reconcile(run, pending.cause, 'restart', true);
  }

  /**
   * At most once a heartbeat interval, while some run could use more: when what jobs hold changed (a job ended or
   * was claimed), runs below max_workers are re-planned — a waiting one at once, a running one after the settle.
   */
  private watchJobs(now: number): void {
    if (now < this.jobsCheckDueAt) return;
    const wanting = this.liveRuns().filter(wantsMore);
    if (wanting.length === 0) return;
    this.jobsCheckDueAt = now + this.opts.heartbeatIntervalMs;
    const key = jobHoldingsKey(this.opts.capacity());
    if (key === this.jobsSeen) return;
    this.jobsSeen = key;
    for (const run of wanting) {
      if (run.state === 'running') run.reconcileDueAt ??= now + this.opts.heartbeatIntervalMs;
      else this.reconcile(run, 'capacity freed', run.state === 'paused' ? 'resume' : 'start');
    }
  }

  private trimRuns(): void {
    while (this.runList.length > MAX_RUNS_KEPT) {
      const i = this.runList.findIndex((r) => ENDED.has(r.state));
      if (i === -1) break;
      this.runList.splice(i, 1);
    }
  }
}

