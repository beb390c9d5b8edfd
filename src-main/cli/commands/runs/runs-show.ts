/** `gpu-share runs show [ID]`: one run in full — state and why, progress, each worker, its latest events. */
import { noMorePositionals, parseCommandLine, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { formatRunDetail } from './run-format';
import { fetchRun, pickRunId } from './run-select';

/** Events of the run shown under it. */
const EVENTS_SHOWN = 10;

export const runsShowCommand: Command = {
  name: 'show',
  summary: 'one run: state and why, step, loss, workers, shards, latest events',
  usage: `Usage: gpu-share runs show [ID] [--json]

Shows one run: its state and the reason for it, generation and restarts, step of total with loss and
samples/s, one row per worker (step, shard, restarts it caused, GPU residency) and its latest events.
Without ID: the newest live run, or else the newest.
--json prints the RunSnapshot as GET /v1/runs/{id} answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    noMorePositionals(positionals, 1);
    return runOperator('gpu-share runs show', values, io, async (client) => {
      const run = await fetchRun(client, await pickRunId(client, positionals[0], false));
      if (values.json) {
        printJson(io, run);
        return 0;
      }
      const { events } = await client.call('state', [], undefined);
      io.out(formatRunDetail(run, events.filter((e) => e.runId === run.id).slice(-EVENTS_SHOWN), Date.now()));
      return 0;
    });
  },
};
