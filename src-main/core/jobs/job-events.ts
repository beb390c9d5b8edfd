/**
 * What the job queue puts in the events feed (issue 17 defect 11: the feed said nothing about jobs): a manifest
 * taken, and each job's start, completion, failure (for good, or to be tried again) and cancellation. Each
 * function is one line at its call in job-service.ts, and says nothing where no sink is given (unit tests).
 */
import type { CoordinatorEventKind, EventSeverity } from '../../../src-shared/training';

export type JobEventKind = Extract<CoordinatorEventKind, 'jobs-submitted' | 'job-started' | 'job-finished' | 'job-failed' | 'job-cancelled' | 'artifact-deleted'>;

/** Where the job service tells its events (the coordinator's recordEvent). */
export type JobEventSink = (kind: JobEventKind, severity: EventSeverity, message: string, about?: JobEventAbout) => void;

/** The job and node an event is about, so the Events view links to them and filters by them. */
export interface JobEventAbout {
  jobId: string;
  node?: string;
}

interface RowFacts {
  id: string;
  name: string;
  status: string;
  node: string | null;
  gpuIndex: number | null;
  attempts: number;
  maxAttempts: number;
  lastNode?: string | null;
}

function about(row: RowFacts): JobEventAbout {
  const node = row.node ?? row.lastNode ?? null;
  return node === null ? { jobId: row.id } : { jobId: row.id, node };
}

export function tellSubmitted(sink: JobEventSink | undefined, fileName: string, r: { added: readonly string[]; kept: readonly string[]; missing: readonly string[] }): void {
  sink?.('jobs-submitted', 'info', `Manifest ${fileName} taken: ${r.added.length} new, ${r.kept.length} kept, ${r.missing.length} no longer in it`);
}

export function tellStarted(sink: JobEventSink | undefined, row: RowFacts): void {
  const where = `${row.node ?? '?'}${row.gpuIndex === null ? ' (CPU)' : ` (GPU ${row.gpuIndex})`}`;
  sink?.('job-started', 'info', `Job ${row.name} started on ${where}: attempt ${row.attempts} of ${row.maxAttempts}`, about(row));
}

export function tellFinished(sink: JobEventSink | undefined, row: RowFacts, sha256: string, sizeBytes: number): void {
  sink?.('job-finished', 'info', `Job ${row.name} completed on ${row.node ?? 'its node'}: artifact ${sha256.slice(0, 12)} (${sizeBytes} bytes)`, about(row));
}

/** A failed attempt: an error when it was the last one, a warning when the job goes back to the queue. */
export function tellFailed(sink: JobEventSink | undefined, row: RowFacts, error: string): void {
  if (row.status === 'failed') sink?.('job-failed', 'error', `Job ${row.name} ${error} — no attempts left (${row.attempts} of ${row.maxAttempts})`, about(row));
  else sink?.('job-failed', 'warning', `Job ${row.name} ${error} — it will be tried again`, about(row));
}

/** Said only when the cancel changed something (a job already ended stays as it was). */
export function tellCancelled(sink: JobEventSink | undefined, before: RowFacts, after: RowFacts | undefined): void {
  if (after?.status === 'cancelled' && before.status !== 'cancelled') sink?.('job-cancelled', 'info', `Job ${before.name} cancelled by operator (it was ${before.status})`, about(before));
}
