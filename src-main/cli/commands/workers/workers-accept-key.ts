/** `gpu-share workers accept-key NAME`: pin the new key a node presented, which the coordinator held back. */
import { parseCommandLine, UsageError, noMorePositionals, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';

export const workersAcceptKeyCommand: Command = {
  name: 'accept-key',
  summary: 'accept the new key a node presented (it is held back until then)',
  usage: `Usage: gpu-share workers accept-key NAME [--json]

A node that joins with another Ed25519 key than the one pinned at its first join is held back: a reinstalled
machine, a deleted node-key, or someone posing as it. Compare the fingerprint the coordinator shows (the
Workers view, or \`gpu-share workers list --json\`: keyHeldBack) with the one the node's agent prints, then
accept it: the new key is pinned and the old one no longer speaks for the node.
--json prints {"workers": [WorkerSnapshot, …]} as POST /v1/nodes/{name}/accept-key answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    if (positionals.length === 0) throw new UsageError('give the node whose new key to accept (see `gpu-share workers list`)');
    noMorePositionals(positionals, 1);
    const node = positionals[0]!;
    return runOperator('gpu-share workers accept-key', values, io, async (client) => {
      const reply = await client.call('acceptNodeKey', [node], undefined, `node ${node} has no new key waiting to be accepted`);
      if (values.json) printJson(io, reply);
      else {
        const fingerprint = reply.workers.find((w) => w.node === node)?.keyFingerprint;
        io.out(`Accepted the new key of ${node}${fingerprint ? ` (${fingerprint})` : ''}: it may join again now.\n`);
      }
      return 0;
    });
  },
};
