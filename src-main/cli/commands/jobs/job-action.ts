/** `jobs cancel` and `jobs requeue`: one operator action on one job, answered with the job's new status. */
import type { JobSnapshot } from '../../../../src-shared/jobs/types';
import { noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { shortId } from './job-format';
import { fetchJob, JOB_ARGUMENT_USAGE, LIST_HINT } from './job-select';

interface JobAction {
  name: 'cancel' | 'requeue';
  endpoint: 'cancelJob' | 'requeueJob';
  summary: string;
  /** What the action does, for --help. */
  effect: string;
  /** "Cancelled", "Requeued". */
  done: string;
}

/** "job 3f9a01b2c4d5 (lora-r8)". */
function describe(job: JobSnapshot): string {
  return `job ${shortId(job.id)} (${job.name})`;
}

function statusText(job: JobSnapshot): string {
  return `${job.status}${job.reason ? ` — ${job.reason}` : ''}`;
}

export function jobActionCommand(action: JobAction): Command {
  const label = `gpu-share jobs ${action.name}`;
  return {
    name: action.name,
    summary: action.summary,
    usage: `Usage: ${label} JOB [--json]

${action.effect}
${JOB_ARGUMENT_USAGE}
Prints the job's status after it; --json prints the JobSnapshot as POST /v1/jobs/{id}/${action.name} answers.
A coordinator that refuses (the job's status does not allow it) says why: exit 1.

${OPERATOR_OPTIONS_USAGE}
`,
    async run(args, io) {
      const { values, positionals } = parseCommandLine(args, operatorOptions);
      if (positionals[0] === undefined) throw new UsageError(`give the job to ${action.name} (${LIST_HINT})`);
      noMorePositionals(positionals, 1);
      return runOperator(label, values, io, async (client) => {
        const before = await fetchJob(client, positionals[0]!);
        const job = await client.call(action.endpoint, [before.id], undefined, `${describe(before)} is gone from this coordinator; ${LIST_HINT}`);
        if (values.json) printJson(io, job);
        else if (job.status === before.status) io.out(`Nothing changed: ${describe(job)} is ${statusText(job)}.\n`);
        else io.out(`${action.done} ${describe(job)}: it was ${before.status}, now ${statusText(job)}.\n`);
        return 0;
      });
    },
  };
}
