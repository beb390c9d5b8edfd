/** `gpu-share jobs delete JOB`: forgets an ended job for good (its output with it; its artifact stays). */
import { noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { shortId } from './job-format';
import { fetchJob, JOB_ARGUMENT_USAGE, LIST_HINT } from './job-select';

export const jobsDeleteCommand: Command = {
  name: 'delete',
  summary: 'delete an ended job (its output goes, its artifact stays)',
  usage: `Usage: gpu-share jobs delete JOB [--json]

Deletes the job from the queue and the state database, with its output; the adapter it produced stays in
\`gpu-share jobs artifacts\`. Only an ended job (completed, failed or cancelled) can be deleted: a pending or
running one is refused with exit 1 — cancel it first with \`gpu-share jobs cancel JOB\`. Submitting a manifest
that still lists the job queues it again.
${JOB_ARGUMENT_USAGE}
--json prints {"deleted": ID} as POST /v1/jobs/{id}/delete answers.

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    if (positionals[0] === undefined) throw new UsageError(`give the job to delete (${LIST_HINT})`);
    noMorePositionals(positionals, 1);
    return runOperator('gpu-share jobs delete', values, io, async (client) => {
      const job = await fetchJob(client, positionals[0]!);
      const result = await client.call('deleteJob', [job.id], undefined, `job ${shortId(job.id)} (${job.name}) is gone from this coordinator; ${LIST_HINT}`);
      if (values.json) printJson(io, result);
      else io.out(`Deleted job ${shortId(job.id)} (${job.name}), which was ${job.status}.\n`);
      return 0;
    });
  },
};
