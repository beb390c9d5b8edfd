/** `gpu-share runs stop [ID]`: tells every member to stop; the run ends `stopped`. */
import { noMorePositionals, parseCommandLine, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { LIVE_STATES } from './run-format';
import { fetchRun, pickRunId } from './run-select';

export const runsStopCommand: Command = {
  name: 'stop',
  summary: 'stop a run (without ID: the live one, when only one is)',
  usage: `Usage: gpu-share runs stop [ID] [--json]

Stops the run: every worker training it is told to stop, and the run ends as stopped; other runs go on.
Without ID: the live run, when only one is (with several, it names them and stops none). Stopping a run that has already ended changes nothing and says so.
--json prints the RunSnapshot as POST /v1/runs/{id}/stop answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    noMorePositionals(positionals, 1);
    return runOperator('gpu-share runs stop', values, io, async (client) => {
      const before = await fetchRun(client, await pickRunId(client, positionals[0], true));
      const run = await client.call('stopRun', [before.id], undefined);
      if (values.json) printJson(io, run);
      else if (LIVE_STATES.has(before.state)) io.out(`Stopped run ${run.id} (${run.spec.name}); it was ${before.state}.\n`);
      else io.out(`Run ${run.id} (${run.spec.name}) had already ended: ${run.state}${run.stateCause ? ` — ${run.stateCause}` : ''}. Nothing changed.\n`);
      return 0;
    });
  },
};
