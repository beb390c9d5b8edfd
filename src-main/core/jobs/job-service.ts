/**
 * The cluster as a scheduler of adapter jobs: a manifest fills the persistent queue (state.db), each round
 * places pending jobs on the slots and VRAM budgets they fit (job-placement-round.ts), claims them in the queue
 * and hands the claim to the chosen worker as a runJob instruction. Workers report back with the claim's
 * fencing token; a late word from an old claim gets 409. Claims whose worker failed go back to pending, stale
 * ones are swept, and the ledger learns each model's measured VRAM peak.
 */
import type { Readable } from 'node:stream';
import { type ClaimToken, formatClaimToken, type GpuFree, type JobBeat, parseClaimToken } from '../../../src-shared/jobs/job-protocol';
import { DEFAULT_JOBS_PAGE, PLACEMENT_WINDOW } from '../../../src-shared/jobs/jobs-page';
import type { ArtifactSnapshot, JobSnapshot, JobsPageQuery, JobsState, ManifestSubmitResult, PlacementPolicy } from '../../../src-shared/jobs/types';
import { sanitizeRemoteOutput } from '../../../src-shared/terminal-text';
import type { ClusterConfig } from '../../../src-shared/cluster/types';
import type { UserNotification, WorkerSnapshot } from '../../../src-shared/training';
import { deleteEndedJob, lastPrintedLine, recordJobMetrics, stateWithMetrics, withMetrics } from './job-results';
import { tellCancelled, tellFailed, tellFinished, tellStarted, tellSubmitted, type JobEventSink } from './job-events';
import type { Clock } from '../../platform/ports';
import { ApiProblem, type JobCapacity } from '../coordinator/common';
import type { CoordinatorService } from '../coordinator/service';
import { nodeCapacities } from '../../../src-shared/scheduling/capacity';
import type { StateDb } from '../state/state-db';
import type { JobRow, TimedJobOutput } from '../state/jobs-repo';
import type { ArtifactStore } from './artifact-store';
import { ArtifactHousekeeping } from './artifact-housekeeping';
import { jobAlerts, type JobAlertState } from './job-alerts';
import { runJobInstruction } from './job-launch';
import { currentHoldings, placementRound, workerFacts, type RoundInputs, type RoundResult } from './job-placement-round';
import { jobSnapshot, jobsState, lastProgressIn } from './job-snapshots';
import type { JobAck, JobsPort, StoredArtifact } from './jobs-port';
import { nextTurn } from './manifest-yielding';
import { jobProjectPeers, type JobPeerSource, type JobProjectStore } from './job-project';
import { MANIFEST_KEY, takeManifest, type ManifestMeta } from './manifest-take';

/** Claims without a heartbeat this long are swept back to pending (design.md's default). */
export const STALE_CLAIM_MS = 600_000;
/** After a (re)start, workers get this long to join again before their claims are given to others. */
export const REJOIN_GRACE_MS = 30_000;
const TICK_MS = 500;
const LIVE_WORKER_STATES = new Set(['syncing', 'active', 'draining']);
/** Most jobs one tick announces as failed for good (a whole sweep failing at once is one story, not 10,000). */
const MAX_ALERTED_FAILURES = 100;

export interface JobServiceOptions {
  clock: Clock;
  db: StateDb;
  artifacts: ArtifactStore;
  cluster: () => ClusterConfig;
  /** `hasTorch`, where the coordinator offers it, keeps runs' reservations off machines a torchrun run cannot use. */
  coordinator: Pick<CoordinatorService, 'workers' | 'runs' | 'queueInstruction' | 'setJobHooks'> & { hasTorch?(workerId: number): boolean; runMembersKey?(): string; runsCtl?: JobPeerSource };
  notify: (notification: UserNotification) => void;
  event?: JobEventSink; // the events feed (job-events.ts)
  projects?: JobProjectStore; // where a manifest's `project` is snapshotted (job-project.ts); absent: refused
  staleAfterMs?: number;
  rejoinGraceMs?: number;
}

/** The artifact store's key for one claim (attempt) of a job: one upload at a time, the latest one kept. */
function uploadClaim(jobId: string, claimToken: string): string {
  return `${jobId}/${claimToken}`;
}

export class JobService implements JobsPort {
  private readonly clock: Clock;
  private readonly db: StateDb;
  private readonly store: ArtifactStore;
  readonly housekeeping: ArtifactHousekeeping;
  private readonly startedAt: number;
  private readonly gpuFree = new Map<number, Map<number, number>>();
  private readonly measured = new Map<string, number>();
  /** Claims already told to stop, so a worker that keeps beating for one is not told again every second. */
  private readonly cancelled = new Set<string>();
  private readonly listeners = new Map<(state: JobsState) => void, () => JobsPageQuery>();
  private readonly alerts: JobAlertState = { announcedFinal: new Set(), sweepActive: false };
  private lastRound: RoundResult | null = null;
  /** When the alerts last looked for jobs that failed for good (they look only at rows changed since). */
  private alertsCheckedAt = 0;
  /** Manifest submissions, one after another (each yields to the event loop between its steps). */
  private submitting: Promise<unknown> = Promise.resolve();
  private workersSeen = '';
  private dirty = true;
  private timer: { cancel(): void } | null = null;

  constructor(private readonly opts: JobServiceOptions) {
    this.clock = opts.clock;
    this.db = opts.db;
    this.store = opts.artifacts;
    // Stored tarballs the index refers to are never removed; others only after a grace (artifact-store.ts).
    this.store.useIndex((sha256) => this.db.artifacts.has(sha256));
    this.housekeeping = new ArtifactHousekeeping(this.db, this.store, opts.event, () => this.changed());
    this.startedAt = opts.clock.now();
    opts.coordinator.setJobHooks({ beats: (workerId, _node, req) => this.beats(workerId, req.jobs ?? [], req.gpuFree), capacity: () => this.capacity() });
  }

  start(): void {
    if (this.timer) return;
    // The retention rule may have changed, or outputs arrived, while the coordinator was down.
    this.housekeeping.enforce();
    this.timer = this.clock.setInterval(() => this.tick(), TICK_MS);
    this.tick();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
    this.opts.coordinator.setJobHooks(null);
  }

  /** Hears the jobs state (the page `page` names, the first by default) after every change (at most one per tick). Returns the unsubscribe. */
  subscribe(listener: (state: JobsState) => void, page: () => JobsPageQuery = () => DEFAULT_JOBS_PAGE): () => void {
    this.listeners.set(listener, page);
    return () => this.listeners.delete(listener);
  }

  /** Sweeps stale claims, frees the claims of workers that are gone, places what fits, and tells listeners. */
  tick(): void {
    const now = this.clock.now();
    const swept = this.db.jobs.sweepStale(now, this.opts.staleAfterMs ?? STALE_CLAIM_MS);
    if (swept.requeued.length + swept.failed.length > 0) this.dirty = true;
    this.releaseGoneWorkers(now);
    this.store.sweepUnindexed();
    const workers = this.opts.coordinator.workers();
    // A run taking or freeing machines moves what jobs may use, as a worker changing state does.
    const seen = `${workers.map((w) => `${w.id}:${w.state}`).join(',')}|${this.opts.coordinator.runMembersKey?.() ?? ''}`;
    if (seen !== this.workersSeen) {
      this.workersSeen = seen;
      this.dirty = true;
    }
    if (!this.dirty) return;
    this.dirty = false;
    this.schedule(now);
    const counts = this.db.jobs.counts();
    const failed = this.db.jobs.failedSince(this.alertsCheckedAt, MAX_ALERTED_FAILURES);
    this.alertsCheckedAt = now;
    jobAlerts({ counts, failed }, this.alerts, this.opts.notify);
    for (const [listener, page] of this.listeners) listener(this.state(page()));
  }

  // --- the operator side ------------------------------------------------------------------------------------

  /** The counts of the whole queue and one page of it (the first 200 jobs by default). */
  state(query: JobsPageQuery = DEFAULT_JOBS_PAGE): JobsState {
    const meta = this.manifestMeta();
    const counts = this.db.jobs.counts();
    const rows = this.db.jobs.page(query);
    const firstPending = rows.find((r) => r.status === 'pending');
    const pendingAhead = firstPending ? this.db.jobs.pendingBefore(firstPending.seq) : 0;
    const matching = query.status ? counts[query.status] : counts.total;
    return stateWithMetrics(this.db, jobsState({ rows, query, matching, counts, pendingAhead }, this.lastRound, this.policy(), meta?.fileName ?? null));
  }

  /**
   * Loads a manifest: parsed, its ids hashed, then synced into the queue in one transaction, yielding to the
   * event loop between those steps so heartbeats and requests are answered while a 10,000-job manifest is taken.
   */
  submit(fileName: string, text: string): Promise<ManifestSubmitResult> {
    const run = this.submitting.then(async (): Promise<ManifestSubmitResult> => {
      const taken = await takeManifest({ db: this.db, clock: this.clock, projects: this.opts.projects ?? null }, fileName, text);
      if (!taken.ok) return taken;
      this.db.kv.set(MANIFEST_KEY, { fileName, hosts: taken.manifest.hosts, placement: taken.manifest.placement } satisfies ManifestMeta);
      await nextTurn();
      this.changed();
      tellSubmitted(this.opts.event, fileName, taken.result);
      return taken.result;
    });
    this.submitting = run.catch(() => undefined);
    return run;
  }

  setPolicy(policy: PlacementPolicy): PlacementPolicy {
    const meta = this.manifestMeta() ?? { fileName: '', hosts: [], placement: policy };
    this.db.kv.set(MANIFEST_KEY, { ...meta, placement: policy });
    this.changed();
    return policy;
  }

  job(jobId: string): JobSnapshot {
    const row = this.require(jobId);
    const preview = this.lastRound?.previews.find((p) => p.jobId === jobId);
    return withMetrics(this.db, jobSnapshot(row, preview, row.status === 'pending' && !preview ? this.db.jobs.pendingBefore(row.seq) : null));
  }

  jobOutput(jobId: string): TimedJobOutput {
    this.require(jobId);
    return this.db.jobs.timedOutput(jobId);
  }

  cancel(jobId: string): JobSnapshot {
    const before = this.require(jobId);
    const result = this.db.jobs.cancel(jobId, 'cancelled by operator', this.clock.now());
    if (result?.previous && before.workerId !== null) this.tellToStop(before.workerId, jobId, result.previous, 'cancelled by operator');
    tellCancelled(this.opts.event, before, result?.row);
    this.changed();
    return this.job(jobId);
  }

  deleteJob(jobId: string): { deleted: string } {
    return deleteEndedJob(this.db, this.require(jobId), () => this.changed());
  }

  requeue(jobId: string): JobSnapshot {
    const before = this.require(jobId);
    const result = this.db.jobs.requeue(jobId, this.clock.now());
    if (result?.previous && before.workerId !== null) this.tellToStop(before.workerId, jobId, result.previous, 'requeued by operator');
    this.alerts.announcedFinal.delete(jobId);
    this.changed();
    return this.job(jobId);
  }

  artifacts(): ArtifactSnapshot[] {
    return this.db.artifacts.list();
  }

  openArtifact(sha256: string): Promise<{ stream: Readable; sizeBytes: number } | null> {
    return this.db.artifacts.has(sha256) ? this.store.openInspected(sha256) : Promise.resolve(null);
  }

  // --- the worker side --------------------------------------------------------------------------------------

  started(workerId: number, jobId: string, body: { token: string; pid: number }): JobAck {
    const token = this.claimOf(workerId, jobId, body.token);
    const row = this.db.jobs.markRunning(jobId, token, this.clock.now());
    if (!row) throw this.stale(jobId);
    this.db.jobs.appendOutput(jobId, `[gpu-share] attempt ${row.attempts} started on ${row.node ?? '?'}${row.gpuIndex === null ? ' (CPU)' : ` (GPU ${row.gpuIndex})`}, pid ${body.pid}\r\n`, this.clock.now());
    tellStarted(this.opts.event, row);
    this.changed();
    return { ok: true, status: row.status };
  }

  output(workerId: number, jobId: string, body: { token: string; data: string }): JobAck {
    const row = this.current(workerId, jobId, body.token);
    this.db.jobs.appendOutput(jobId, sanitizeRemoteOutput(body.data), this.clock.now());
    return { ok: true, status: row.status };
  }

  complete(workerId: number, jobId: string, body: { token: string; artifactSha256: string; sizeBytes: number }): JobAck {
    const token = this.claimOf(workerId, jobId, body.token);
    if (!this.store.has(body.artifactSha256)) throw new ApiProblem(400, `artifact ${body.artifactSha256} was not uploaded; PUT it before completing the job`);
    const now = this.clock.now();
    // Its final progress from the last progress line it printed (the agent drains its output before completing).
    const last = lastProgressIn(this.db.jobs.output(jobId));
    if (last) this.db.jobs.heartbeat(jobId, token, now, { usedMib: null, progress: last });
    const row = this.db.jobs.complete(jobId, token, body.artifactSha256, now);
    if (!row) throw this.stale(jobId);
    this.db.artifacts.record(body.artifactSha256, this.store.sizeOf(body.artifactSha256) ?? body.sizeBytes, jobId, token.attempt, now);
    this.store.indexed(uploadClaim(jobId, body.token));
    if (row.peakVramMb !== null && row.peakVramMb > 0) this.db.vramPeaks.record(row.spec.model, row.spec.mode, row.peakVramMb, now);
    this.db.jobs.appendOutput(jobId, `[gpu-share] completed; artifact ${body.artifactSha256.slice(0, 12)} (${body.sizeBytes} bytes)\r\n`, this.clock.now());
    tellFinished(this.opts.event, row, body.artifactSha256, body.sizeBytes);
    this.housekeeping.enforce();
    void recordJobMetrics(this.db, () => this.store.open(body.artifactSha256), jobId, () => this.changed());
    this.measured.delete(jobId);
    this.changed();
    return { ok: true, status: row.status };
  }

  fail(workerId: number, jobId: string, body: { token: string; error: string; outputTail: string }): JobAck {
    const token = this.claimOf(workerId, jobId, body.token);
    const before = this.db.jobs.get(jobId);
    const lastLine = lastPrintedLine(body.outputTail);
    const error = `attempt ${token.attempt} on ${before?.node ?? 'its node'} failed: ${body.error}${lastLine ? ` — ${lastLine}` : ''}`;
    const row = this.db.jobs.fail(jobId, token, error, this.clock.now());
    if (!row) throw this.stale(jobId);
    this.db.jobs.appendOutput(jobId, `[gpu-share] ${error}${row.status === 'pending' ? ' — it will be tried again' : ''}\r\n`, this.clock.now());
    tellFailed(this.opts.event, row, error);
    this.measured.delete(jobId);
    this.changed();
    return { ok: true, status: row.status };
  }

  async upload(workerId: number, jobId: string, claimToken: string, sha256: string, body: Readable, contentLength: number | null): Promise<StoredArtifact> {
    this.current(workerId, jobId, claimToken);
    return this.store.put(body, sha256, contentLength, uploadClaim(jobId, claimToken));
  }

  // --- internals ---------------------------------------------------------------------------------------------

  /** Job beats from a heartbeat: heartbeat each claim, learn measured VRAM; stop claims that are not current. */
  private beats(workerId: number, beats: JobBeat[], gpuFree: GpuFree[] | undefined): void {
    if (gpuFree) this.gpuFree.set(workerId, new Map(gpuFree.map((g) => [g.index, g.freeMb])));
    const now = this.clock.now();
    for (const beat of beats) {
      const token = parseClaimToken(beat.token);
      const before = this.db.jobs.get(beat.jobId);
      const row = token && before?.workerId === workerId ? this.db.jobs.heartbeat(beat.jobId, token, now, { usedMib: beat.usedMib, progress: beat.progress }) : null;
      if (!row) {
        if (token) this.tellToStop(workerId, beat.jobId, token, 'this claim of the job is no longer current');
        continue;
      }
      if (beat.usedMib !== null) this.measured.set(beat.jobId, beat.usedMib);
      if (beat.usedMib !== null && row.heldVramMb > 0 && beat.usedMib > row.heldVramMb && !row.overBudget) {
        this.db.jobs.setOverBudget(beat.jobId, token!);
        this.db.jobs.appendOutput(beat.jobId, `[gpu-share] uses ${beat.usedMib} MiB of VRAM, more than the ${row.heldVramMb} MiB it was placed on\r\n`, this.clock.now());
      }
      this.dirty = true;
    }
  }

  /** The cluster's nodes and what jobs hold of them now (no runs): what the coordinator plans runs against. */
  private capacity(): JobCapacity {
    const workers = this.opts.coordinator.workers();
    const nodes = nodeCapacities(this.opts.cluster(), workerFacts(workers, this.gpuFree), this.manifestMeta()?.hosts ?? []);
    return { nodes, holdings: currentHoldings(this.db.jobs.active(), [], workers, this.measured, nodes) };
  }

  private schedule(now: number): void {
    const workers = this.opts.coordinator.workers();
    const round = placementRound(this.roundInputs(workers));
    for (const placement of round.placements) {
      const target = { node: placement.node, workerId: placement.workerId, gpuIndex: placement.gpuIndex, heldVramMb: placement.vramMb };
      const row = this.db.jobs.claim(placement.jobId, target, now);
      if (!row) continue;
      const worker = workers.find((w) => w.id === placement.workerId);
      this.opts.coordinator.queueInstruction(placement.workerId, runJobInstruction(row, worker?.gpus ?? [], jobProjectPeers(this.opts.coordinator.runsCtl, this.db, row, placement.workerId)));
    }
    // The views show the queue after these claims: previews and ledger from a second round (nothing more fits in it).
    this.lastRound = round.placements.length > 0 ? placementRound(this.roundInputs(workers)) : round;
  }

  private roundInputs(workers: WorkerSnapshot[]): RoundInputs {
    return {
      config: this.opts.cluster(),
      workers,
      gpuFree: this.gpuFree,
      measured: this.measured,
      hosts: this.manifestMeta()?.hosts ?? [],
      rows: [...this.db.jobs.active(), ...this.db.jobs.pendingHead(PLACEMENT_WINDOW)],
      runs: this.opts.coordinator.runs(),
      measuredPeak: (spec) => this.db.vramPeaks.get(spec.model, spec.mode),
      policy: this.policy(),
      ...(this.opts.coordinator.hasTorch ? { hasTorch: (workerId: number) => this.opts.coordinator.hasTorch!(workerId) } : {}),
    };
  }

  /** Claims held by workers that failed or left go back to pending — after a restart, once they had time to rejoin. */
  private releaseGoneWorkers(now: number): void {
    if (now - this.startedAt < (this.opts.rejoinGraceMs ?? REJOIN_GRACE_MS)) return;
    const workers = new Map(this.opts.coordinator.workers().map((w) => [w.id, w]));
    const gone = this.db.jobs.claimHolders().filter((id) => !LIVE_WORKER_STATES.has(workers.get(id)?.state ?? 'gone'));
    for (const workerId of gone) {
      const worker = workers.get(workerId);
      const why = worker ? `worker ${worker.node} ${worker.state}${worker.stateCause ? ` (${worker.stateCause})` : ''}` : `worker ${workerId} is gone`;
      const released = this.db.jobs.releaseWorker(workerId, why, now);
      for (const row of released) this.db.jobs.appendOutput(row.id, `[gpu-share] ${why}; the job goes back to the queue\r\n`, now);
      this.gpuFree.delete(workerId);
      this.dirty = true;
    }
  }

  private tellToStop(workerId: number, jobId: string, token: ClaimToken, reason: string): void {
    const text = formatClaimToken(token);
    if (this.cancelled.has(text)) return;
    this.cancelled.add(text);
    if (this.cancelled.size > 10_000) this.cancelled.clear();
    this.opts.coordinator.queueInstruction(workerId, { kind: 'cancelJob', jobId, token: text, reason });
  }

  /** The claim `tokenText` names, if it is this worker's and current (else 409). */
  private current(workerId: number, jobId: string, tokenText: string): JobRow {
    const token = this.claimOf(workerId, jobId, tokenText);
    const row = this.require(jobId);
    if (row.claimId !== token.claimId || row.attempts !== token.attempt || (row.status !== 'claimed' && row.status !== 'running')) throw this.stale(jobId);
    return row;
  }

  private claimOf(workerId: number, jobId: string, tokenText: string): ClaimToken {
    const token = parseClaimToken(tokenText);
    if (!token) throw new ApiProblem(400, 'the claim token is not <claimId>.<attempt>');
    const row = this.require(jobId);
    if (row.workerId !== null && row.workerId !== workerId) throw this.stale(jobId);
    return token;
  }

  private stale(jobId: string): ApiProblem {
    const row = this.db.jobs.get(jobId);
    return new ApiProblem(409, `this claim of job ${row?.name ?? jobId} is no longer current (the job is ${row?.status ?? 'gone'}${row?.attempts ? `, attempt ${row.attempts}` : ''}); stop it`);
  }

  private require(jobId: string): JobRow {
    const row = this.db.jobs.get(jobId);
    if (!row) throw new ApiProblem(404, `no job ${jobId}`);
    return row;
  }

  private manifestMeta(): ManifestMeta | null {
    return this.db.kv.get<ManifestMeta>(MANIFEST_KEY) ?? null;
  }

  private policy(): PlacementPolicy {
    return this.manifestMeta()?.placement ?? 'binpack';
  }

  private changed(): void {
    this.dirty = true;
    this.tick();
  }
}
