/** A queue of fresh jobs on a temporary state.db, and a job's current claim token, for the queue's unit tests. */
import type { JobRow, StateDb } from '../../../src-main/core/state/index';
import type { ClaimToken } from '../../../src-shared/jobs/job-protocol';
import { jobList } from './jobs-fixtures';
import { openTemp } from './temp-state';

export const T0 = 1_700_000_000_000;

export function tokenOf(row: JobRow): ClaimToken {
  return { claimId: row.claimId!, attempt: row.attempts };
}

/** `count` pending jobs synced at T0 (closed after the test). */
export function queueOf(count: number, over = {}): StateDb {
  const db = openTemp();
  db.jobs.sync(jobList(count, 'job', over), T0);
  return db;
}
