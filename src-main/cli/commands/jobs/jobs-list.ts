/** `gpu-share jobs list [--status S] [--limit N --offset M]`: the queue, one row per job, paged through or one page. */
import { MAX_JOBS_PAGE_LIMIT } from '../../../../src-shared/jobs/jobs-page';
import type { JobStatus } from '../../../../src-shared/jobs/types';
import { intOption, noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { formatJobsTable, JOB_STATUSES, jobListRows } from './job-format';
import { allJobs, jobsPage } from './job-pages';

function statusOption(raw: string | undefined): JobStatus | null {
  if (raw === undefined) return null;
  const status = JOB_STATUSES.find((s) => s === raw);
  if (!status) throw new UsageError(`--status must be one of ${JOB_STATUSES.join(', ')}; got "${raw}"`);
  return status;
}

export const jobsListCommand: Command = {
  name: 'list',
  summary: 'the queue: status, node, attempts, progress and why of every job',
  usage: `Usage: gpu-share jobs list [--status S] [--limit N] [--offset M] [--json]

Lists the coordinator's jobs in queue order: id (its first 12 hex digits), name, status, node (and GPU),
attempts of the most allowed, progress (step/total) and the reason it is where it is ("waiting: no node fits
…", the last failure). Without --limit or --offset it reads the whole queue, ${MAX_JOBS_PAGE_LIMIT} jobs per request.

Options:
  --status S   only jobs in status S: ${JOB_STATUSES.join(', ')}
  --limit N    only one page of at most N jobs (1 to ${MAX_JOBS_PAGE_LIMIT}; 200 when only --offset is given)
  --offset M   the page starts after the first M jobs (of status S, with --status)
  --json       [{"id", "name", "status", "node", "attempts", "reason", "artifact"}, …] with full ids

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, { ...operatorOptions, status: { type: 'string' }, limit: { type: 'string' }, offset: { type: 'string' } });
    noMorePositionals(positionals);
    const status = statusOption(values.status);
    const paged = values.limit !== undefined || values.offset !== undefined;
    const limit = intOption(values.limit, 'limit', 200, 1, MAX_JOBS_PAGE_LIMIT);
    const offset = intOption(values.offset, 'offset', 0, 0, 999_999_999);
    return runOperator('gpu-share jobs list', values, io, async (client) => {
      const jobs = paged ? (await jobsPage(client, { offset, limit, status })).jobs : await allJobs(client, status);
      // A coordinator from before paging ignores the query and answers every job: filter and cut here too.
      const shown = (status ? jobs.filter((j) => j.status === status) : jobs).slice(0, paged ? limit : undefined);
      if (values.json) printJson(io, jobListRows(shown));
      else io.out(formatJobsTable(shown, status));
      return 0;
    });
  },
};
