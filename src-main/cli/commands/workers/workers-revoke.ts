/** `gpu-share workers revoke NAME`: take a node's approval back; it leaves every run and must be approved again. */
import { noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';

export const workersRevokeCommand: Command = {
  name: 'revoke',
  summary: 'take back a node\'s approval: its session ends and it leaves every run',
  usage: `Usage: gpu-share workers revoke NAME [--json]

Removes the approval of the node's key from the coordinator's state.db, ends the node's session and takes its
worker out of the live run (the run goes on with the others). Its agent's next join awaits approval again.
--json prints {"workers": […], "awaiting": […]} as POST /v1/nodes/{name}/revoke answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    if (positionals.length === 0) throw new UsageError('give the node whose approval to revoke (see `gpu-share workers list`)');
    noMorePositionals(positionals, 1);
    const node = positionals[0]!;
    return runOperator('gpu-share workers revoke', values, io, async (client) => {
      const reply = await client.call('revokeNode', [node], undefined);
      if (values.json) printJson(io, reply);
      else io.out(`Revoked ${node}: its session ended and it left every run; it must be approved again to train.\n`);
      return 0;
    });
  },
};
