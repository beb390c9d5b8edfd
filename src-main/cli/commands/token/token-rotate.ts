/** `gpu-share token rotate`: replace the join token of the coordinator on this machine (docs/api.md, "Joining"). */
import { noMorePositionals, parseCommandLine, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';

export const tokenRotateCommand: Command = {
  name: 'rotate',
  summary: 'make a new join token; machines already approved keep working, new machines need the new one',
  usage: `Usage: gpu-share token rotate [--json]

Makes a new join token, keeps it in secrets.json in the coordinator's data folder, and the running coordinator
uses it at once. The replaced token (and up to 7 before it) still lets in the machines already approved, whose
agents hold it; a machine that is not approved needs the new token. Give the new token (in the join command of
the Workers view's "Add a worker" panel) only to machines you mean to let in.
--json prints {"joinToken": "…"} as POST /v1/join-token/rotate answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    noMorePositionals(positionals, 0);
    return runOperator('gpu-share token rotate', values, io, async (client) => {
      const reply = await client.call('rotateJoinToken', [], undefined);
      if (values.json) printJson(io, reply);
      else {
        io.out(
          `New join token: ${reply.joinToken}\n` +
            'Machines already approved keep working with the old one. A new machine joins with\n' +
            `  GPU_SHARE_JOIN_TOKEN=${reply.joinToken} gpu-share worker --join URL --cert-sha256 HEX\n` +
            '(the whole command is in the Workers view\'s "Add a worker" panel).\n',
        );
      }
      return 0;
    });
  },
};
