/**
 * Jobs as the UI, the API and the CLI see them: queue rows with a reason for every wait, and the ledger. A state
 * is one page of the queue with the counts of all of it, and every reason is capped, so its size does not grow
 * with the queue or with the nodes the coordinator remembers.
 */
import { PLACEMENT_WINDOW } from '../../../src-shared/jobs/jobs-page';
import type { JobSnapshot, JobsPageQuery, JobsState, NodeVerdict, PlacementPolicy, PlacementPreview, SweepCounts } from '../../../src-shared/jobs/types';
import { buildLedger } from '../../../src-shared/scheduling/ledger';
import type { JobProgress } from '../../../src-shared/jobs/types';
import { parseProgressLine } from '../../platform/runs/progress-line';
import type { JobRow } from '../state/jobs-repo';
import type { RoundResult } from './job-placement-round';

/** Why a pending job waits, from its preview: the nodes that said no, each with its reason. */
export function waitingReason(verdicts: NodeVerdict[] | undefined): string {
  if (!verdicts || verdicts.length === 0) return 'waiting for a worker to join';
  const no = verdicts.filter((v) => !v.ok);
  if (no.length === verdicts.length && no.every((v) => v.permanent)) {
    return `no node can ever run it as the cluster is: ${joinCapped(no.map((v) => v.reason))} — change the job's requirements or add a node that meets them`;
  }
  if (no.length === verdicts.length) return `no node fits now: ${joinCapped(no.map((v) => v.reason))}`;
  return 'waiting for its turn';
}

/** Longest list of node reasons in one job's reason; the rest are counted ("… and 40 more nodes"). */
export const MAX_REASON_CHARS = 1000;

function joinCapped(reasons: string[]): string {
  let text = '';
  for (let i = 0; i < reasons.length; i++) {
    const next = text ? `${text}; ${reasons[i]}` : reasons[i]!;
    if (next.length > MAX_REASON_CHARS && i > 0) return `${text}; … and ${reasons.length - i} more node${reasons.length - i === 1 ? '' : 's'}`;
    text = next.length > MAX_REASON_CHARS ? `${next.slice(0, MAX_REASON_CHARS)}…` : next;
  }
  return text;
}

/** Why a pending job the placement round did not look at waits: the pending jobs ahead of it. */
export function behindReason(ahead: number): string {
  return `waiting behind ${ahead} earlier pending job${ahead === 1 ? '' : 's'} (each placement round looks at the first ${PLACEMENT_WINDOW})`;
}

/**
 * A pending job's wait: its preview's verdicts when the round looked at it, else the jobs ahead of it when it is
 * beyond the round's window (`ahead`, when known). Any earlier failure stays in front.
 */
function pendingReason(row: JobRow, preview: PlacementPreview | undefined, ahead: number | null): string | null {
  const wait = preview ? waitingReason(preview.verdicts) : ahead !== null && ahead >= PLACEMENT_WINDOW ? behindReason(ahead) : null;
  if (wait === null) return row.reason;
  return row.reason ? `${row.reason}; ${wait}` : wait;
}

export function jobSnapshot(row: JobRow, preview?: PlacementPreview, ahead: number | null = null): JobSnapshot {
  const reason = row.status === 'pending' ? pendingReason(row, preview, ahead) : row.reason;
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

/** Lines looked at from the end of a job's output for its last progress line (its output tail is bounded too). */
const MAX_LINES_BACK = 2000;

/**
 * The last progress line of a job's output, as its final progress: the heartbeat's is a sample taken up to a
 * beat before the end ("step 28 of 40" on a job whose output ends at step 39). Null when it printed none.
 */
export function lastProgressIn(output: string): JobProgress | null {
  const lines = output.split('\n');
  for (let i = lines.length - 1, seen = 0; i >= 0 && seen < MAX_LINES_BACK; i--, seen++) {
    const line = parseProgressLine(lines[i]!);
    if (line) return { step: line.step, totalSteps: line.totalSteps, loss: line.loss };
  }
  return null;
}

export function emptyCounts(): SweepCounts {
  return { total: 0, pending: 0, claimed: 0, running: 0, completed: 0, failed: 0, cancelled: 0 };
}

/** One page of the queue and what goes with it (JobService.state gathers these from the queue). */
export interface PageInputs {
  rows: JobRow[];
  query: JobsPageQuery;
  /** Jobs in the whole queue that the query's status filter matches. */
  matching: number;
  counts: SweepCounts;
  /** Pending jobs ahead of the page's first pending row (so the page's pending rows know their place). */
  pendingAhead: number;
}

export function jobsState(page: PageInputs, round: RoundResult | null, policy: PlacementPolicy, manifestName: string | null): JobsState {
  const previews = new Map((round?.previews ?? []).map((p) => [p.jobId, p]));
  let ahead = page.pendingAhead;
  const jobs: JobSnapshot[] = [];
  const shown: PlacementPreview[] = [];
  for (const row of page.rows) {
    const preview = previews.get(row.id);
    if (preview) shown.push(preview);
    jobs.push(jobSnapshot(row, preview, row.status === 'pending' ? ahead : null));
    if (row.status === 'pending') ahead += 1;
  }
  return {
    jobs,
    ledger: round ? buildLedger(round.nodes, round.holdings) : [],
    previews: shown,
    counts: page.counts,
    placement: policy,
    manifestName,
    page: { ...page.query, matching: page.matching },
  };
}
