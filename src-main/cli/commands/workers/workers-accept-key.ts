/** `gpu-share workers accept-key NAME --key SHA256:…`: approve exactly the new key a node presented, which the coordinator held back. */
import type { Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, printJson, runOperator } from '../../operator/operator-command';
import { parseNodeKeyChoice } from './node-key-choice';

export const workersAcceptKeyCommand: Command = {
  name: 'accept-key',
  summary: 'accept exactly the new key a node presented (it is held back until then)',
  usage: `Usage: gpu-share workers accept-key NAME --key SHA256:… [--json]

A node that joins with another Ed25519 key than the one approved for it is held back: a reinstalled
machine, a deleted node-key, or someone posing as it. Compare the fingerprint the coordinator shows (the
Workers view, or \`gpu-share workers list\`) with the one the node's agent prints, then accept exactly that
key: it is approved and the old one no longer speaks for the node. A key other than --key (swapped in
since you looked) is refused, with both fingerprints named.
--json prints {"workers": [WorkerSnapshot, …]} as POST /v1/nodes/{name}/accept-key answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, node, fingerprint } = parseNodeKeyChoice(args, 'accept-key');
    return runOperator('gpu-share workers accept-key', values, io, async (client) => {
      const reply = await client.call('acceptNodeKey', [node], { fingerprint }, `node ${node} has no new key waiting to be accepted`);
      if (values.json) printJson(io, reply);
      else io.out(`Accepted the new key of ${node} (${fingerprint}): it may join again now.\n`);
      return 0;
    });
  },
};
