/**
 * A job as the queue keeps it (JobRow) and its mapping to and from the jobs table's columns. JobRow is the
 * queue's own record: JobSnapshot (what the UI and API see) is derived from it by the job service.
 */
import type { JobProgress, JobSpec, JobStatus } from '../../../src-shared/jobs/types';
import type { ClaimToken } from '../../../src-shared/jobs/job-protocol';

export interface JobRow {
  id: string;
  /** Queue order. */
  seq: number;
  name: string;
  spec: JobSpec;
  status: JobStatus;
  /** Claims made so far (the current one included). */
  attempts: number;
  maxAttempts: number;
  /** The current claim's id (kept on a completed job, so a retried complete can be recognised). */
  claimId: string | null;
  node: string | null;
  workerId: number | null;
  gpuIndex: number | null;
  heldVramMb: number;
  /** Node of the last attempt, kept after a failure, a sweep or a cancel cleared `node`. */
  lastNode: string | null;
  reason: string | null;
  artifact: string | null;
  progress: JobProgress | null;
  peakVramMb: number | null;
  overBudget: boolean;
  inManifest: boolean;
  createdAt: number;
  updatedAt: number;
  claimedAt: number | null;
  heartbeatAt: number | null;
  startedAt: number | null;
  finishedAt: number | null;
}

/** Where a claim puts a job: the scheduler's choice. */
export interface JobPlacementTarget {
  node: string;
  workerId: number;
  gpuIndex: number | null;
  heldVramMb: number;
}

/** The jobs table's row, as better-sqlite3 returns it. */
export interface JobDbRow {
  seq: number;
  id: string;
  name: string;
  spec: string;
  status: string;
  attempts: number;
  max_attempts: number;
  claim_id: string | null;
  node: string | null;
  worker_id: number | null;
  gpu_index: number | null;
  held_vram_mb: number;
  last_node: string | null;
  reason: string | null;
  artifact: string | null;
  progress: string | null;
  peak_vram_mb: number | null;
  over_budget: number;
  in_manifest: number;
  created_at: number;
  updated_at: number;
  claimed_at: number | null;
  heartbeat_at: number | null;
  started_at: number | null;
  finished_at: number | null;
}

export function jobFromDbRow(row: JobDbRow): JobRow {
  return {
    id: row.id,
    seq: row.seq,
    name: row.name,
    spec: JSON.parse(row.spec) as JobSpec,
    status: row.status as JobStatus,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    claimId: row.claim_id,
    node: row.node,
    workerId: row.worker_id,
    gpuIndex: row.gpu_index,
    heldVramMb: row.held_vram_mb,
    lastNode: row.last_node,
    reason: row.reason,
    artifact: row.artifact,
    progress: row.progress === null ? null : (JSON.parse(row.progress) as JobProgress),
    peakVramMb: row.peak_vram_mb,
    overBudget: row.over_budget === 1,
    inManifest: row.in_manifest === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    claimedAt: row.claimed_at,
    heartbeatAt: row.heartbeat_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

/** The claim a claimed or running row holds, or null. */
export function currentClaim(row: Pick<JobRow, 'status' | 'claimId' | 'attempts'>): ClaimToken | null {
  if ((row.status !== 'claimed' && row.status !== 'running') || row.claimId === null) return null;
  return { claimId: row.claimId, attempt: row.attempts };
}

/** SQL condition: the row is claimed or running under the token bound as @claimId / @attempt. */
export const HOLDS_TOKEN = "status IN ('claimed', 'running') AND claim_id = @claimId AND attempts = @attempt";

/** SQL assignments taking a job off its node (moving the node to last_node): a pending or final job is on none. */
export const OFF_NODE = 'claim_id = NULL, last_node = coalesce(node, last_node), node = NULL, worker_id = NULL, gpu_index = NULL, held_vram_mb = 0';

/**
 * SQL assignments ending an attempt that did not complete: back to pending while attempts are left, else failed,
 * with `reasonSql` as the reason. Binds @now.
 */
export function endAttempt(reasonSql: string): string {
  return `status = CASE WHEN attempts < max_attempts THEN 'pending' ELSE 'failed' END,
  finished_at = CASE WHEN attempts < max_attempts THEN NULL ELSE @now END, reason = ${reasonSql}, updated_at = @now, ${OFF_NODE}`;
}
