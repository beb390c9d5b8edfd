/**
 * Deleting artifacts and the retention rule (issue 25, housekeeping). The store is content-addressed, so one
 * tarball may be the output of several job attempts and runs: deleting a job's artifact takes that job out of
 * its producers, and the bytes go only once no job and no run refers to them. Nothing is deleted while a job that
 * produced it runs again or its bytes are being uploaded or downloaded (409, saying which). The rule (a runtime
 * setting in state.db) is enforced at start and after every stored output, oldest first (retention-choice.ts).
 * Every removal is an event.
 */
import { describeRetention, NO_RETENTION, type ArtifactHousekeeping as HousekeepingSummary, type ArtifactRetention } from '../../../src-shared/jobs/artifact-retention';
import type { ArtifactSnapshot } from '../../../src-shared/jobs/types';
import { ApiProblem } from '../coordinator/common';
import { runArtifactOriginsKey } from '../projects/run-projects';
import type { StateDb } from '../state/state-db';
import type { ArtifactStore } from './artifact-store';
import type { JobEventSink } from './job-events';
import { chooseRemovals, type RetentionCandidate, type RetentionRemoval } from './retention-choice';

const RETENTION_KEY = 'artifacts.retention';

/** What a delete did: the whole artifact went (`removed`), or only the job's claim on bytes others still use. */
export interface ArtifactDeleted {
  sha256: string;
  removed: boolean;
  freedBytes: number;
  /** Job attempts and runs that still refer to the bytes (0 when they were removed). */
  stillUsedBy: number;
}

function mb(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${bytes} bytes`;
}

export class ArtifactHousekeeping {
  constructor(
    private readonly db: StateDb,
    private readonly store: ArtifactStore,
    private readonly event: JobEventSink | undefined,
    /** Told after anything was removed (the job service tells the views). */
    private readonly changed: () => void = () => undefined,
  ) {}

  rule(): ArtifactRetention {
    return this.db.kv.get<ArtifactRetention>(RETENTION_KEY) ?? NO_RETENTION;
  }

  summary(): HousekeepingSummary {
    return { retention: this.rule(), ...this.db.artifacts.totals() };
  }

  /** Sets the rule and enforces it at once; returns what it removed. */
  setRule(rule: ArtifactRetention): { retention: ArtifactRetention; removed: RetentionRemoval[] } {
    this.db.kv.set(RETENTION_KEY, rule);
    const removed = this.enforce();
    this.changed();
    return { retention: rule, removed };
  }

  /** Removes what the rule says, oldest first, never a pinned artifact; each removal is an event. */
  enforce(): RetentionRemoval[] {
    const rule = this.rule();
    if (rule.keepLast === null && rule.maxTotalGb === null) return [];
    const list = this.db.artifacts.list();
    const running = this.runningJobs();
    const candidates: RetentionCandidate[] = list.map((a) => ({ sha256: a.sha256, sizeBytes: a.sizeBytes, createdAt: a.createdAt, pinned: this.pinned(a, running) }));
    const removals = chooseRemovals(candidates, rule);
    for (const removal of removals) {
      const artifact = list.find((a) => a.sha256 === removal.sha256)!;
      this.removeAll(artifact);
      this.event?.('artifact-deleted', 'info', `Artifact ${removal.sha256.slice(0, 12)} (${mb(removal.sizeBytes)}${madeBy(artifact)}) removed by the retention rule (${describeRetention(rule)}): ${removal.why}`, about(artifact));
    }
    if (removals.length > 0) this.changed();
    return removals;
  }

  /**
   * Deletes the artifact, or with `jobId` only that job's claim on it (the bytes go when nothing else refers to
   * them). 404 an unknown artifact or a job that did not produce it, 409 while it is pinned.
   */
  delete(sha256: string, jobId?: string): ArtifactDeleted {
    const artifact = this.db.artifacts.get(sha256);
    if (!artifact) throw new ApiProblem(404, `no artifact ${sha256} on this coordinator (see GET /v1/artifacts)`);
    const job = jobId === undefined ? undefined : artifact.producedBy.find((p) => p.jobId === jobId);
    if (jobId !== undefined && !job) throw new ApiProblem(404, `job ${jobId.slice(0, 12)} did not produce artifact ${sha256.slice(0, 12)} (or its claim on it was deleted already)`);
    const pinned = this.pinned(artifact, this.runningJobs());
    if (pinned) throw new ApiProblem(409, `artifact ${sha256.slice(0, 12)} is not deleted now: ${pinned}; try again once that is done`);
    if (job) {
      const jobsLeft = this.db.artifacts.forgetJob(sha256, job.jobId);
      const left = jobsLeft + this.runsOf(sha256).length;
      if (left > 0) {
        this.event?.('artifact-deleted', 'info', `Artifact ${sha256.slice(0, 12)} of job ${job.jobName} deleted by the operator: its bytes stay, ${left} other job attempt(s) or run(s) produced them too`, { jobId: job.jobId });
        this.changed();
        return { sha256, removed: false, freedBytes: 0, stillUsedBy: left };
      }
    }
    this.removeAll(artifact);
    this.event?.('artifact-deleted', 'info', `Artifact ${sha256.slice(0, 12)} (${mb(artifact.sizeBytes)}${madeBy(artifact)}) deleted by the operator`, job ? { jobId: job.jobId } : about(artifact));
    this.changed();
    return { sha256, removed: true, freedBytes: artifact.sizeBytes, stillUsedBy: 0 };
  }

  /** Rows first (so nothing serves it any more), then the bytes. */
  private removeAll(artifact: ArtifactSnapshot): void {
    this.db.artifacts.remove(artifact.sha256);
    this.db.kv.delete(runArtifactOriginsKey(artifact.sha256));
    this.store.discard(artifact.sha256);
  }

  /** Why the artifact may not go now, or null. */
  private pinned(artifact: ArtifactSnapshot, running: Map<string, string>): string | null {
    const transfer = this.store.transferOf(artifact.sha256);
    if (transfer) return `its bytes are being ${transfer}`;
    const live = artifact.producedBy.find((p) => running.has(p.jobId));
    return live ? `job ${live.jobName}, which produced it, is ${running.get(live.jobId)} again (cancel it or wait for it to end)` : null;
  }

  /** Claimed and running jobs, by id, with their status. */
  private runningJobs(): Map<string, string> {
    return new Map(this.db.jobs.active().map((row) => [row.id, row.status]));
  }

  private runsOf(sha256: string): unknown[] {
    return this.db.kv.get<unknown[]>(runArtifactOriginsKey(sha256)) ?? [];
  }
}

function madeBy(artifact: ArtifactSnapshot): string {
  const job = artifact.producedBy.at(-1);
  return job ? `, job ${job.jobName}` : '';
}

function about(artifact: ArtifactSnapshot): { jobId: string } | undefined {
  const job = artifact.producedBy.at(-1);
  return job ? { jobId: job.jobId } : undefined;
}
