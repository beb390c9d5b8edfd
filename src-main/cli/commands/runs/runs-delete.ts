/** `gpu-share runs delete ID`: forgets an ended run for good (its output, loss curve and shard maps with it). */
import { noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { fetchRun } from './run-select';

export const runsDeleteCommand: Command = {
  name: 'delete',
  summary: 'delete an ended run (its output and history go with it)',
  usage: `Usage: gpu-share runs delete ID [--json]

Deletes the run from the coordinator and its state database: its output, loss curve, shard maps and worker
rows go with it, and it is no longer listed after a restart. Only an ended run (finished, failed or stopped)
can be deleted: a live one is refused with exit 1 — stop it first with \`gpu-share runs stop ID\`.
--json prints {"deleted": ID} as POST /v1/runs/{id}/delete answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    if (positionals[0] === undefined) throw new UsageError('give the run to delete (gpu-share runs list shows their ids)');
    noMorePositionals(positionals, 1);
    return runOperator('gpu-share runs delete', values, io, async (client) => {
      const run = await fetchRun(client, positionals[0]!);
      const result = await client.call('deleteRun', [run.id], undefined);
      if (values.json) printJson(io, result);
      else io.out(`Deleted run ${run.id} (${run.spec.name}), which had ${run.state === 'finished' ? 'finished' : `ended ${run.state}`}.\n`);
      return 0;
    });
  },
};
