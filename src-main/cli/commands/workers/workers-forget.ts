/** `gpu-share workers forget NAME`: drop an offline node's worker rows for good; its key stays pinned. */
import { noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';

export const workersForgetCommand: Command = {
  name: 'forget',
  summary: 'forget an offline (failed or left) worker: its rows go from the list and from state.db',
  usage: `Usage: gpu-share workers forget NAME [--json]

Forgets every offline (failed or left) worker record of node NAME: it leaves \`workers list\` and the
coordinator's state.db, so it stays gone after a restart. Refused (exit 1, saying why) while a worker of that
node is online or a member of a live run: drain it or stop the run first. A node never seen: exit 5.
The node's approved key is kept: the same machine can join as NAME again, and a machine with another key under
that name still awaits approval. \`gpu-share workers revoke NAME\` takes the approval back as well.
--json prints {"workers": […]} as POST /v1/nodes/{name}/forget answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    if (positionals.length === 0) throw new UsageError('give the node to forget (see `gpu-share workers list`)');
    noMorePositionals(positionals, 1);
    const node = positionals[0]!;
    return runOperator('gpu-share workers forget', values, io, async (client) => {
      const reply = await client.call('forgetNode', [node], undefined);
      if (values.json) printJson(io, reply);
      else io.out(`Forgot ${node}: its offline worker rows are gone (also after a restart); its key stays approved, so only that machine can join as ${node} again.\n`);
      return 0;
    });
  },
};
