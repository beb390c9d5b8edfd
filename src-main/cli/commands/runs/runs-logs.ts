/** `gpu-share runs logs [ID] [--follow]`: the run's output tail, every line prefixed with the machine that wrote it. */
import { intOption, noMorePositionals, parseCommandLine, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { followRun, lastLines } from './follow-run';
import { pickRunId } from './run-select';

export const runsLogsCommand: Command = {
  name: 'logs',
  summary: "a run's output, each line prefixed with its machine (--follow: as it comes)",
  usage: `Usage: gpu-share runs logs [ID] [--follow] [--tail N] [--json]

Prints the run's output as the coordinator keeps it (its last 256 KiB), each line prefixed with the machine
that wrote it: "[beta] step 120 loss 0.0412". Without ID: the newest live run, or else the newest.

Options:
  --follow, -f   keep printing new output every second until the run ends; then exit 0 if it finished,
                 6 if it failed or was stopped (the last line, on stderr, says which)
  --tail N       only the last N lines (before following)
  --json         {"runId", "output"} as GET /v1/runs/{id}/output answers; with --follow one JSON object per
                 line: {"runId", "output"} for each new piece, then {"runId", "state", "stateCause"}

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, { ...operatorOptions, follow: { type: 'boolean', short: 'f' }, tail: { type: 'string' } });
    noMorePositionals(positionals, 1);
    const tail = intOption(values.tail, 'tail', 0, 1, 1_000_000);
    return runOperator('gpu-share runs logs', values, io, async (client) => {
      const id = await pickRunId(client, positionals[0], false);
      if (values.follow) return followRun(client, id, io, { json: values.json === true, tail });
      const reply = await client.call('runOutput', [id], undefined, `no run "${id}" on this coordinator; run ids are listed by \`gpu-share runs list\``);
      if (values.json) printJson(io, { ...reply, output: lastLines(reply.output, tail) });
      else {
        const text = lastLines(reply.output, tail);
        io.out(text && !text.endsWith('\n') ? `${text}\n` : text);
      }
      return 0;
    });
  },
};
