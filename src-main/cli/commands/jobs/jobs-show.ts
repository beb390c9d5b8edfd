/** `gpu-share jobs show JOB`: one job in full — spec, where and why, the placement verdicts, its last output. */
import { intOption, noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { withoutProgress } from '../../../../src-shared/runs/progress-status';
import { lastLines } from '../runs/follow-run';
import { formatJobDetail } from './job-format';
import { allJobs } from './job-pages';
import { JOB_ARGUMENT_USAGE, LIST_HINT, selectJob } from './job-select';

export const jobsShowCommand: Command = {
  name: 'show',
  summary: 'one job: spec, status and why, node and VRAM, placement verdicts, last output',
  usage: `Usage: gpu-share jobs show JOB [--lines N] [--progress] [--json]

Shows one job: status and the reason for it, attempts, node and GPU, VRAM held and measured, progress,
artifact, its spec (command, model, hyper, constraints), where it could go node by node (each node's reason
when it cannot) and the last lines of its output (its GPU_SHARE_PROGRESS lines left out: the progress line above
says the latest step).
${JOB_ARGUMENT_USAGE}

Options:
  --lines N   output lines shown (default 20)
  --progress  keep the trainer's GPU_SHARE_PROGRESS lines in the output shown
  --json      {"job": JobSnapshot, "verdicts": [NodeVerdict, …], "output": "<the last N lines>"} (docs/api.md; every
              line, progress lines included)

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, { ...operatorOptions, lines: { type: 'string' }, progress: { type: 'boolean' } });
    if (positionals[0] === undefined) throw new UsageError(`give the job to show (${LIST_HINT})`);
    noMorePositionals(positionals, 1);
    const lines = intOption(values.lines, 'lines', 20, 1, 100_000);
    return runOperator('gpu-share jobs show', values, io, async (client) => {
      const jobs = await allJobs(client);
      const { id } = selectJob(jobs, positionals[0]!);
      const notFound = `job ${id} is gone from this coordinator; ${LIST_HINT}`;
      const job = await client.call('job', [id], undefined, notFound);
      const log = (await client.call('jobLog', [id], undefined, notFound)).output;
      const output = lastLines(values.json || values.progress ? log : withoutProgress(log), lines);
      // Its per-node verdicts come with the page it is on (the one-job page at its place in the queue).
      const around = await client.call('jobsState', [{ offset: jobs.findIndex((j) => j.id === id), limit: 1 }], undefined);
      const verdicts = around.previews.find((p) => p.jobId === id)?.verdicts ?? [];
      if (values.json) printJson(io, { job, verdicts, output });
      else io.out(formatJobDetail(job, verdicts, output, Date.now()));
      return 0;
    });
  },
};
