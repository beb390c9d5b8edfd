/** `gpu-share jobs list [--status S]`: the queue, one row per job. */
import type { JobStatus } from '../../../../src-shared/jobs/types';
import { noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { formatJobsTable, JOB_STATUSES, jobListRows } from './job-format';

function statusOption(raw: string | undefined): JobStatus | null {
  if (raw === undefined) return null;
  const status = JOB_STATUSES.find((s) => s === raw);
  if (!status) throw new UsageError(`--status must be one of ${JOB_STATUSES.join(', ')}; got "${raw}"`);
  return status;
}

export const jobsListCommand: Command = {
  name: 'list',
  summary: 'the queue: status, node, attempts, progress and why of every job',
  usage: `Usage: gpu-share jobs list [--status S] [--json]

Lists the coordinator's jobs in queue order: id (its first 12 hex digits), name, status, node (and GPU),
attempts of the most allowed, progress (step/total) and the reason it is where it is ("waiting: no node fits
…", the last failure).

Options:
  --status S   only jobs in status S: ${JOB_STATUSES.join(', ')}
  --json       [{"id", "name", "status", "node", "attempts", "reason", "artifact"}, …] with full ids

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, { ...operatorOptions, status: { type: 'string' } });
    noMorePositionals(positionals);
    const status = statusOption(values.status);
    return runOperator('gpu-share jobs list', values, io, async (client) => {
      const { jobs } = await client.call('jobsState', [], undefined);
      const shown = status ? jobs.filter((j) => j.status === status) : jobs;
      if (values.json) printJson(io, jobListRows(shown));
      else io.out(formatJobsTable(shown));
      return 0;
    });
  },
};
