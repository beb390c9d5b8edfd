/**
 * The persistent job queue: pending → claimed → running → completed | failed | cancelled, in the jobs table.
 *
 * - A claim is one UPDATE … RETURNING on the first pending row, so two processes (or two calls) can never take
 *   the same job: SQLite runs one write transaction at a time and the second finds the row no longer pending.
 * - Every later call about a job carries its claim's token (claim id + attempt) and is refused (null) unless
 *   that is the claim the job holds now: a worker whose claim was swept, cancelled or given to another cannot
 *   complete or fail the job any more (fencing).
 * - Every write is acknowledged (committed before the call returns), except appendOutput, which is batched.
 * - Time is passed in (`now`, epoch ms), never read here, so tests drive the stale sweep with a fake clock.
 */
import type { Database, Statement } from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import type { ClaimToken } from '../../../src-shared/jobs/job-protocol';
import { FINAL_JOB_STATUSES, type JobProgress, type JobSpec, type JobStatus, type SweepCounts } from '../../../src-shared/jobs/types';
import type { BatchedWriter } from './batched-writer';
import { JobOutputTail, type TimedJobOutput } from './job-output';
export type { TimedJobOutput } from './job-output';
import { ManifestSync, type ManifestSyncResult } from './jobs-manifest-sync';
import { currentClaim, endAttempt, HOLDS_TOKEN, jobFromDbRow, OFF_NODE, type JobDbRow, type JobPlacementTarget, type JobRow } from './job-rows';

export type { JobPlacementTarget, JobRow } from './job-rows';

/** A claim goes stale after this long without a heartbeat (10 minutes). */
export const DEFAULT_STALE_AFTER_MS = 600_000;

/** What a claim sets; binds @claimId, @node, @workerId, @gpuIndex, @held, @now. */
const CLAIM_SET = `status = 'claimed', attempts = attempts + 1, claim_id = @claimId, node = @node, worker_id = @workerId,
  gpu_index = @gpuIndex, held_vram_mb = @held, claimed_at = @now, heartbeat_at = @now, started_at = NULL, finished_at = NULL,
  reason = NULL, progress = NULL, peak_vram_mb = NULL, over_budget = 0, updated_at = @now`;

interface ClaimParams {
  claimId: string;
  node: string;
  workerId: number;
  gpuIndex: number | null;
  held: number;
  now: number;
}

interface TokenParams {
  id: string;
  claimId: string;
  attempt: number;
  now: number;
}

/** A fresh claim id: 16 base64url characters (96 random bits). */
function newClaimId(): string {
  return randomBytes(12).toString('base64url');
}

function claimParams(target: JobPlacementTarget, now: number): ClaimParams {
  return { claimId: newClaimId(), node: target.node, workerId: target.workerId, gpuIndex: target.gpuIndex, held: target.heldVramMb, now };
}

function tokenParams(id: string, token: ClaimToken, now: number): TokenParams {
  return { id, claimId: token.claimId, attempt: token.attempt, now };
}

/** The list as given, or an error naming the two jobs that share an id (nothing is changed then). */
function uniqueIds(specs: { id: string; spec: JobSpec }[]): { id: string; spec: JobSpec }[] {
  const listed = new Map<string, JobSpec>();
  for (const { id, spec } of specs) {
    const twin = listed.get(id);
    if (twin) throw new Error(`jobs "${twin.name}" and "${spec.name}" have the same id ${id} (identical defining fields): list each job once`);
    listed.set(id, spec);
  }
  return specs;
}

function bySeq(rows: JobDbRow[]): JobRow[] {
  return rows.map(jobFromDbRow).sort((a, b) => a.seq - b.seq);
}

export class JobsRepo {
  private readonly claimNextStmt: Statement<ClaimParams, JobDbRow>;
  private readonly claimStmt: Statement<ClaimParams & { id: string }, JobDbRow>;
  private readonly markRunningStmt: Statement<TokenParams, JobDbRow>;
  private readonly heartbeatStmt: Statement<TokenParams & { used: number | null; progress: string | null }, JobDbRow>;
  private readonly completeStmt: Statement<TokenParams & { artifact: string }, JobDbRow>;
  private readonly completedAlready: Statement<TokenParams & { artifact: string }, JobDbRow>;
  private readonly failStmt: Statement<TokenParams & { reason: string }, JobDbRow>;
  private readonly overBudgetStmt: Statement<TokenParams>;
  private readonly releaseStmt: Statement<{ workerId: number; reason: string; now: number }, JobDbRow>;
  private readonly sweepStmt: Statement<{ now: number; staleAfterMs: number }, JobDbRow>;
  private readonly cancelStmt: Statement<{ id: string; reason: string; now: number }, JobDbRow>;
  private readonly releaseToPending: Statement<{ id: string; now: number }, JobDbRow>;
  private readonly resetToPending: Statement<{ id: string; now: number }, JobDbRow>;
  private readonly getStmt: Statement<[string], JobDbRow>;
  private readonly listStmt: Statement<[], JobDbRow>;
  private readonly holdersStmt: Statement<[], { worker_id: number }>;
  private readonly countsStmt: Statement<[], { status: string; n: number }>;
  private readonly pageStmt: Statement<{ limit: number; offset: number }, JobDbRow>;
  private readonly pageByStatusStmt: Statement<{ status: string; limit: number; offset: number }, JobDbRow>;
  private readonly pendingHeadStmt: Statement<[number], JobDbRow>;
  private readonly activeStmt: Statement<[], JobDbRow>;
  private readonly pendingBeforeStmt: Statement<[number], { n: number }>;
  private readonly failedSinceStmt: Statement<{ since: number; limit: number }, JobDbRow>;
  private readonly outputTail: JobOutputTail;
  private readonly manifests: ManifestSync;
  private readonly deleteEndedStmt: Statement<[string]>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
    maxOutputBytes?: number,
  ) {
    this.claimNextStmt = db.prepare(
      `UPDATE jobs SET ${CLAIM_SET} WHERE seq = (SELECT seq FROM jobs WHERE status = 'pending' ORDER BY seq LIMIT 1) AND status = 'pending' RETURNING *`,
    );
    this.claimStmt = db.prepare(`UPDATE jobs SET ${CLAIM_SET} WHERE id = @id AND status = 'pending' RETURNING *`);
    this.deleteEndedStmt = db.prepare("DELETE FROM jobs WHERE id = ? AND status IN ('completed', 'failed', 'cancelled')");
    this.markRunningStmt = db.prepare(
      `UPDATE jobs SET status = 'running', started_at = coalesce(started_at, @now), updated_at = @now WHERE id = @id AND ${HOLDS_TOKEN} RETURNING *`,
    );
    this.heartbeatStmt = db.prepare(
      `UPDATE jobs SET heartbeat_at = @now, updated_at = @now, progress = coalesce(@progress, progress),
         peak_vram_mb = CASE WHEN @used IS NULL THEN peak_vram_mb ELSE max(coalesce(peak_vram_mb, @used), @used) END
       WHERE id = @id AND ${HOLDS_TOKEN} RETURNING *`,
    );
    this.completeStmt = db.prepare(
      `UPDATE jobs SET status = 'completed', artifact = @artifact, finished_at = @now, held_vram_mb = 0, updated_at = @now
       WHERE id = @id AND ${HOLDS_TOKEN} RETURNING *`,
    );
    this.completedAlready = db.prepare(
      "SELECT * FROM jobs WHERE id = @id AND status = 'completed' AND claim_id = @claimId AND attempts = @attempt AND artifact = @artifact",
    );
    this.failStmt = db.prepare(`UPDATE jobs SET ${endAttempt('@reason')} WHERE id = @id AND ${HOLDS_TOKEN} RETURNING *`);
    this.overBudgetStmt = db.prepare(`UPDATE jobs SET over_budget = 1 WHERE id = @id AND ${HOLDS_TOKEN}`);
    this.releaseStmt = db.prepare(`UPDATE jobs SET ${endAttempt('@reason')} WHERE worker_id = @workerId AND status IN ('claimed', 'running') RETURNING *`);
    this.sweepStmt = db.prepare(
      `UPDATE jobs SET ${endAttempt("'no heartbeat for ' || CAST((@now - heartbeat_at) / 1000 AS INTEGER) || ' s (stale claim swept)'")}
       WHERE status IN ('claimed', 'running') AND heartbeat_at < @now - @staleAfterMs RETURNING *`,
    );
    this.cancelStmt = db.prepare(
      `UPDATE jobs SET status = 'cancelled', reason = @reason, finished_at = @now, updated_at = @now, ${OFF_NODE} WHERE id = @id RETURNING *`,
    );
    // An operator's release of a live claim: the attempt it was on does not count.
    this.releaseToPending = db.prepare(
      `UPDATE jobs SET status = 'pending', attempts = attempts - 1, reason = NULL, started_at = NULL, finished_at = NULL, updated_at = @now, ${OFF_NODE}
       WHERE id = @id RETURNING *`,
    );
    this.resetToPending = db.prepare(
      `UPDATE jobs SET status = 'pending', attempts = 0, artifact = NULL, reason = NULL, started_at = NULL, finished_at = NULL, updated_at = @now, ${OFF_NODE}
       WHERE id = @id RETURNING *`,
    );
    this.getStmt = db.prepare('SELECT * FROM jobs WHERE id = ?');
    this.listStmt = db.prepare('SELECT * FROM jobs ORDER BY seq');
    this.holdersStmt = db.prepare("SELECT DISTINCT worker_id FROM jobs WHERE status IN ('claimed', 'running')");
    this.countsStmt = db.prepare('SELECT status, count(*) AS n FROM jobs GROUP BY status');
    this.pageStmt = db.prepare('SELECT * FROM jobs ORDER BY seq LIMIT @limit OFFSET @offset');
    this.pageByStatusStmt = db.prepare('SELECT * FROM jobs WHERE status = @status ORDER BY seq LIMIT @limit OFFSET @offset');
    this.pendingHeadStmt = db.prepare("SELECT * FROM jobs WHERE status = 'pending' ORDER BY seq LIMIT ?");
    this.activeStmt = db.prepare("SELECT * FROM jobs WHERE status IN ('claimed', 'running') ORDER BY seq");
    this.pendingBeforeStmt = db.prepare("SELECT count(*) AS n FROM jobs WHERE status = 'pending' AND seq < ?");
    this.failedSinceStmt = db.prepare("SELECT * FROM jobs WHERE status = 'failed' AND updated_at >= @since ORDER BY seq LIMIT @limit");
    this.outputTail = new JobOutputTail(db, writer, maxOutputBytes);
    this.manifests = new ManifestSync(db, writer);
  }

  /**
   * Loads a manifest's jobs, in one transaction. New ids are inserted pending, in the list's order after every
   * job already queued; existing ones take the new name/spec/maxAttempts and keep their status. Jobs the list
   * no longer names are marked out of the manifest; the non-final ones among them are returned as `missing`
   * (they stay until cancelled). Throws, changing nothing, when the list names one id twice.
   */
  sync(specs: { id: string; spec: JobSpec }[], now: number): ManifestSyncResult {
    return this.manifests.sync(uniqueIds(specs), now);
  }

  /**
   * sync, for a long manifest: the jobs are staged a chunk at a time with `between()` awaited between chunks
   * (the caller lets the event loop turn), then the queue changes in one transaction at `now()`.
   */
  syncInSteps(specs: { id: string; spec: JobSpec }[], now: () => number, between: () => Promise<void>): Promise<ManifestSyncResult> {
    return this.manifests.syncInSteps(uniqueIds(specs), now, between);
  }

  /** Claims the first pending job (queue order) for `target`; null when none is pending. */
  claimNext(target: JobPlacementTarget, now: number): JobRow | null {
    return this.updateOne(() => this.claimNextStmt.get(claimParams(target, now)));
  }

  /** Claims this job (the scheduler chose it) for `target`; null when it is no longer pending. */
  claim(jobId: string, target: JobPlacementTarget, now: number): JobRow | null {
    return this.updateOne(() => this.claimStmt.get({ ...claimParams(target, now), id: jobId }));
  }

  /** The job's process started: → running (startedAt set by the first call of this attempt). Null: not this claim. */
  markRunning(jobId: string, token: ClaimToken, now: number): JobRow | null {
    return this.updateOne(() => this.markRunningStmt.get(tokenParams(jobId, token, now)));
  }

  /** The claim is alive; records the highest VRAM seen and the latest progress. Null: not this claim. */
  heartbeat(jobId: string, token: ClaimToken, now: number, beat?: { usedMib: number | null; progress: JobProgress | null }): JobRow | null {
    const progress = beat?.progress ? JSON.stringify(beat.progress) : null;
    return this.updateOne(() => this.heartbeatStmt.get({ ...tokenParams(jobId, token, now), used: beat?.usedMib ?? null, progress }));
  }

  /**
   * → completed with the artifact. The same token again, on a job it already completed with the same artifact,
   * returns the row unchanged (a retry whose answer was lost). Null: not this claim.
   */
  complete(jobId: string, token: ClaimToken, artifact: string, now: number): JobRow | null {
    const params = { ...tokenParams(jobId, token, now), artifact };
    return this.updateOne(() => this.completeStmt.get(params) ?? this.completedAlready.get(params));
  }

  /** The attempt failed: back to pending with `error` as the reason while attempts are left, else failed. Null: not this claim. */
  fail(jobId: string, token: ClaimToken, error: string, now: number): JobRow | null {
    return this.updateOne(() => this.failStmt.get({ ...tokenParams(jobId, token, now), reason: error }));
  }

  /** Flags the job as using more VRAM than it declared (ignored unless `token` is its claim). */
  setOverBudget(jobId: string, token: ClaimToken): void {
    this.writer.writeNow(() => this.overBudgetStmt.run(tokenParams(jobId, token, 0)));
  }

  /** Ends the attempt of every job claimed by or running on this worker (it left or died), as fail() does. */
  releaseWorker(workerId: number, reason: string, now: number): JobRow[] {
    return bySeq(this.writer.writeNow(() => this.releaseStmt.all({ workerId, reason, now })));
  }

  /** Claims without a heartbeat for longer than `staleAfterMs`: back to pending, or failed once out of attempts. */
  sweepStale(now: number, staleAfterMs = DEFAULT_STALE_AFTER_MS): { requeued: JobRow[]; failed: JobRow[] } {
    const rows = bySeq(this.writer.writeNow(() => this.sweepStmt.all({ now, staleAfterMs })));
    return { requeued: rows.filter((r) => r.status === 'pending'), failed: rows.filter((r) => r.status === 'failed') };
  }

  /**
   * Cancels a job that is not final, returning it with the claim it had (its worker must stop it); a final job
   * comes back unchanged with previous null; an unknown one, null.
   */
  /** Deletes an ended job (completed, failed or cancelled) and its output; false when it is not an ended job. */
  deleteEnded(jobId: string): boolean {
    return this.writer.writeNow(() => this.deleteEndedStmt.run(jobId).changes > 0);
  }

  cancel(jobId: string, reason: string, now: number): { row: JobRow; previous: ClaimToken | null } | null {
    return this.writer.writeNow(() => {
      const before = this.getStmt.get(jobId);
      if (!before) return null;
      const row = jobFromDbRow(before);
      if (FINAL_JOB_STATUSES.includes(row.status)) return { row, previous: null };
      return { row: jobFromDbRow(this.cancelStmt.get({ id: jobId, reason, now })!), previous: currentClaim(row) };
    });
  }

  /**
   * Back to pending: a final job with attempts 0 and its artifact cleared; a claimed or running one released
   * without counting the attempt (previous: the claim its worker must stop). A pending job is returned as it is;
   * an unknown one, null.
   */
  requeue(jobId: string, now: number): { row: JobRow; previous: ClaimToken | null } | null {
    return this.writer.writeNow(() => {
      const before = this.getStmt.get(jobId);
      if (!before) return null;
      const row = jobFromDbRow(before);
      if (row.status === 'pending') return { row, previous: null };
      const previous = currentClaim(row);
      const statement = previous ? this.releaseToPending : this.resetToPending;
      return { row: jobFromDbRow(statement.get({ id: jobId, now })!), previous };
    });
  }

  get(jobId: string): JobRow | null {
    const row = this.writer.read(() => this.getStmt.get(jobId));
    return row ? jobFromDbRow(row) : null;
  }

  /** Every job, in queue order. */
  list(): JobRow[] {
    return this.writer.read(() => this.listStmt.all()).map(jobFromDbRow);
  }

  /** One page of the queue, in queue order, optionally of one status only (GET /v1/jobs, the Jobs view). */
  page(query: { offset: number; limit: number; status: JobStatus | null }): JobRow[] {
    const { offset, limit, status } = query;
    const rows = this.writer.read(() => (status ? this.pageByStatusStmt.all({ status, limit, offset }) : this.pageStmt.all({ limit, offset })));
    return rows.map(jobFromDbRow);
  }

  /** The first `limit` pending jobs in queue order: what one placement round looks at (an index range, not the queue). */
  pendingHead(limit: number): JobRow[] {
    return this.writer.read(() => this.pendingHeadStmt.all(limit)).map(jobFromDbRow);
  }

  /** Claimed and running jobs (what holds slots now), in queue order. */
  active(): JobRow[] {
    return this.writer.read(() => this.activeStmt.all()).map(jobFromDbRow);
  }

  /** How many pending jobs come before queue position `seq`. */
  pendingBefore(seq: number): number {
    return this.writer.read(() => this.pendingBeforeStmt.get(seq))?.n ?? 0;
  }

  /** Failed jobs changed at or after `since` (epoch ms), at most `limit`, in queue order. */
  failedSince(since: number, limit: number): JobRow[] {
    return this.writer.read(() => this.failedSinceStmt.all({ since, limit })).map(jobFromDbRow);
  }

  /** The workers holding a claim now (an index lookup, not the whole queue: the service asks twice a second). */
  claimHolders(): number[] {
    return this.writer.read(() => this.holdersStmt.all()).map((r) => r.worker_id);
  }

  counts(): SweepCounts {
    const counts: SweepCounts = { total: 0, pending: 0, claimed: 0, running: 0, completed: 0, failed: 0, cancelled: 0 };
    for (const { status, n } of this.writer.read(() => this.countsStmt.all())) {
      counts[status as Exclude<keyof SweepCounts, 'total'>] = n;
      counts.total += n;
    }
    return counts;
  }

  /** Queues output the job printed, received at `at` (batched; its last 256 KiB are kept). */
  appendOutput(jobId: string, data: string, at: number | null = null): void {
    this.outputTail.append(jobId, data, at);
  }

  /** The job's kept output (batched appends included). */
  output(jobId: string): string {
    return this.outputTail.read(jobId);
  }

  /** The job's kept output and when each of its lines was received (null where not recorded). */
  timedOutput(jobId: string): TimedJobOutput {
    return this.outputTail.readTimed(jobId);
  }

  /** Runs one update, acknowledged: the row it changed (or found), or null when it matched none. */
  private updateOne(update: () => JobDbRow | undefined): JobRow | null {
    const row = this.writer.writeNow(update);
    return row ? jobFromDbRow(row) : null;
  }
}
