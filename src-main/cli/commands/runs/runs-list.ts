/** `gpu-share runs list`: the live run and the last finished ones. */
import { noMorePositionals, parseCommandLine, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { formatRunsTable } from './run-format';

export const runsListCommand: Command = {
  name: 'list',
  summary: 'the live run and the last finished ones',
  usage: `Usage: gpu-share runs list [--json]

Lists the coordinator's runs, newest first: id, name, state, generation, workers, step, loss, age.
--json prints {"runs": [RunSnapshot, …]} as GET /v1/runs answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    noMorePositionals(positionals);
    return runOperator('gpu-share runs list', values, io, async (client) => {
      const reply = await client.call('listRuns', [], undefined);
      if (values.json) printJson(io, reply);
      else io.out(formatRunsTable(reply.runs, Date.now()));
      return 0;
    });
  },
};
