/** Jobs as the UI, the API and the CLI see them: queue rows with a reason for every wait, and the ledger. */
import type { JobSnapshot, JobsState, NodeVerdict, PlacementPolicy, PlacementPreview, SweepCounts } from '../../../src-shared/jobs/types';
import { buildLedger } from '../../../src-shared/scheduling/ledger';
import type { JobRow } from '../state/jobs-repo';
import type { RoundResult } from './job-placement-round';

/** Why a pending job waits, from its preview: the nodes that said no, each with its reason. */
export function waitingReason(verdicts: NodeVerdict[] | undefined): string {
  if (!verdicts || verdicts.length === 0) return 'waiting for a worker to join';
  const no = verdicts.filter((v) => !v.ok);
  if (no.length === verdicts.length) return `no node fits now: ${no.map((v) => v.reason).join('; ')}`;
  return 'waiting for its turn';
}

export function jobSnapshot(row: JobRow, preview?: PlacementPreview): JobSnapshot {
  const reason = row.status === 'pending' && preview ? (row.reason ? `${row.reason}; ${waitingReason(preview.verdicts)}` : waitingReason(preview.verdicts)) : row.reason;
  return {
    id: row.id,
    name: row.name,
    spec: row.spec,
    status: row.status,
    attempts: row.attempts,
    maxAttempts: row.maxAttempts,
    node: row.node,
    workerId: row.workerId,
    gpuIndex: row.gpuIndex,
    heldVramMb: row.heldVramMb,
    reason,
    progress: row.progress,
    artifact: row.artifact,
    measuredPeakMb: row.peakVramMb,
    overBudget: row.overBudget,
    inManifest: row.inManifest,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
  };
}

export function emptyCounts(): SweepCounts {
  return { total: 0, pending: 0, claimed: 0, running: 0, completed: 0, failed: 0, cancelled: 0 };
}

export function countRows(rows: JobRow[]): SweepCounts {
  const counts = emptyCounts();
  for (const row of rows) {
    counts.total += 1;
    counts[row.status] += 1;
  }
  return counts;
}

export function jobsState(rows: JobRow[], round: RoundResult | null, policy: PlacementPolicy, manifestName: string | null): JobsState {
  const previews = new Map((round?.previews ?? []).map((p) => [p.jobId, p]));
  return {
    jobs: rows.map((row) => jobSnapshot(row, previews.get(row.id))),
    ledger: round ? buildLedger(round.nodes, round.holdings) : [],
    previews: round?.previews ?? [],
    counts: countRows(rows),
    placement: policy,
    manifestName,
  };
}
