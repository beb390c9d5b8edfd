/**
 * What a person hears about jobs without looking: a job that failed for the last time, and a sweep (everything
 * submitted) that has finished. Each is said once.
 */
import type { SweepCounts } from '../../../src-shared/jobs/types';
import type { UserNotification } from '../../../src-shared/training';

export interface JobAlertState {
  /** Jobs whose final failure was announced (cleared when requeued). */
  announcedFinal: Set<string>;
  /** Some job was pending, claimed or running when last looked at. */
  sweepActive: boolean;
}

/** What the alerts look at: the whole queue's counts and the jobs that failed for good since the last look. */
export interface JobAlertInputs {
  counts: SweepCounts;
  failed: { id: string; name: string; status: string; attempts: number; maxAttempts: number; reason: string | null }[];
}

export function jobAlerts(state: JobAlertInputs, seen: JobAlertState, notify: (n: UserNotification) => void): void {
  for (const job of state.failed) {
    if (job.status !== 'failed' || seen.announcedFinal.has(job.id)) continue;
    seen.announcedFinal.add(job.id);
    // A job that had already failed before this process started is not news.
    if (!seen.sweepActive && state.counts.pending + state.counts.claimed + state.counts.running === 0) continue;
    notify({
      id: `job-failed-${job.id}-${job.attempts}`,
      title: `Job ${job.name} failed for the last time`,
      body: `${job.reason ?? 'it failed'} (${job.attempts} of ${job.maxAttempts} attempts used). Requeue it from the Jobs view once fixed.`,
      severity: 'error',
      target: { view: 'jobs', jobId: job.id },
    });
  }
  const { total, pending, claimed, running, completed, failed, cancelled } = state.counts;
  const active = pending + claimed + running > 0;
  if (seen.sweepActive && !active && total > 0) {
    notify({
      id: `jobs-done-${completed}-${failed}-${cancelled}`,
      title: failed > 0 ? `Jobs finished: ${failed} failed` : `All ${completed} jobs completed`,
      body: `${completed} completed, ${failed} failed, ${cancelled} cancelled. Their adapters are in the Artifacts view.`,
      severity: failed > 0 ? 'warning' : 'info',
      target: { view: 'jobs' },
    });
  }
  seen.sweepActive = active;
}
