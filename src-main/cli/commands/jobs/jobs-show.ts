/** `gpu-share jobs show JOB`: one job in full — spec, where and why, the placement verdicts, its last output. */
import { intOption, noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { isProgressLine } from '../../../../src-shared/runs/output-lines';
import { ISO_LOCAL_WIDTH, isoLocalTime, timedLines, timeStamper } from '../../../../src-shared/runs/line-time';
import { formatJobDetail } from './job-format';
import { allJobs } from './job-pages';
import { JOB_ARGUMENT_USAGE, LIST_HINT, selectJob } from './job-select';

export const jobsShowCommand: Command = {
  name: 'show',
  summary: 'one job: spec, status and why, node and VRAM, placement verdicts, last output',
  usage: `Usage: gpu-share jobs show JOB [--lines N] [--progress] [--timestamps] [--json]

Shows one job: status and the reason for it, attempts, node and GPU, VRAM held and measured, progress,
artifact, its spec (command, model, hyper, constraints), where it could go node by node (each node's reason
when it cannot) and the last lines of its output (its GPU_SHARE_PROGRESS lines left out: the progress line above
says the latest step).
${JOB_ARGUMENT_USAGE}

Options:
  --lines N   output lines shown (default 20)
  --progress  keep the trainer's GPU_SHARE_PROGRESS lines in the output shown
  --timestamps
              start each output line with the time the coordinator received it, ISO-8601 in local time
              (2026-12-07T13:05:02+01:00); lines kept before times were recorded get blanks instead
  --json      {"job": JobSnapshot, "verdicts": [NodeVerdict, …], "output": "<the last N lines>", "times": […]}
              (docs/api.md; every line, progress lines included; "times": when each line of "output" was
              received, epoch ms, null where not recorded)

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, { ...operatorOptions, lines: { type: 'string' }, progress: { type: 'boolean' }, timestamps: { type: 'boolean' } });
    if (positionals[0] === undefined) throw new UsageError(`give the job to show (${LIST_HINT})`);
    noMorePositionals(positionals, 1);
    const lines = intOption(values.lines, 'lines', 20, 1, 100_000);
    return runOperator('gpu-share jobs show', values, io, async (client) => {
      const jobs = await allJobs(client);
      const { id } = selectJob(jobs, positionals[0]!);
      const notFound = `job ${id} is gone from this coordinator; ${LIST_HINT}`;
      const job = await client.call('job', [id], undefined, notFound);
      const log = await client.call('jobLog', [id], undefined, notFound);
      const all = values.json || values.progress;
      const shown = timedLines(log.output, log.times ?? [], (line) => all === true || !isProgressLine(line)).slice(-lines);
      const stamp = values.timestamps && !values.json ? timeStamper(isoLocalTime, ISO_LOCAL_WIDTH) : () => '';
      const output = shown.map((l) => stamp(l.at) + l.line).join('');
      // Its per-node verdicts come with the page it is on (the one-job page at its place in the queue).
      const around = await client.call('jobsState', [{ offset: jobs.findIndex((j) => j.id === id), limit: 1 }], undefined);
      const verdicts = around.previews.find((p) => p.jobId === id)?.verdicts ?? [];
      if (values.json) printJson(io, { job, verdicts, output, times: shown.map((l) => l.at) });
      else io.out(formatJobDetail(job, verdicts, output, Date.now()));
      return 0;
    });
  },
};
