/**
 * The queue as the CLI reads it: GET /v1/jobs answers one page (at most 1,000 jobs) with the whole queue's
 * counts, so commands that need every job (list, pick a job by name or id prefix) page through it. A coordinator
 * from before paging answers every job at once and no `page`; that answer is taken as it is.
 */
import { MAX_JOBS_PAGE_LIMIT } from '../../../../src-shared/jobs/jobs-page';
import type { JobSnapshot, JobsPageQuery, JobStatus } from '../../../../src-shared/jobs/types';
import type { OperatorClient } from '../../operator/operator-client';

/** Most pages read for one command (10,000 jobs fit in 10; the cap only stops a coordinator that never ends). */
const MAX_PAGES = 100;

/** One page, as the coordinator answers it (its `page` says what it was; absent from an old coordinator). */
export async function jobsPage(client: OperatorClient, query: Partial<JobsPageQuery>): Promise<{ jobs: JobSnapshot[]; matching: number | null }> {
  const state = await client.call('jobsState', [query], undefined);
  return { jobs: state.jobs, matching: state.page?.matching ?? null };
}

/** Every job (of `status`, when given), in queue order, a page of 1,000 at a time. */
export async function allJobs(client: OperatorClient, status: JobStatus | null = null): Promise<JobSnapshot[]> {
  const jobs: JobSnapshot[] = [];
  for (let n = 0; n < MAX_PAGES; n++) {
    const page = await jobsPage(client, { offset: jobs.length, limit: MAX_JOBS_PAGE_LIMIT, status });
    if (page.matching === null) return status ? page.jobs.filter((j) => j.status === status) : page.jobs;
    jobs.push(...page.jobs);
    if (page.jobs.length === 0 || jobs.length >= page.matching) break;
  }
  return jobs;
}
