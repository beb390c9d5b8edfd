/** `gpu-share workers approve NAME --key SHA256:…`: let exactly this key of a machine awaiting approval train. */
import type { Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, printJson, runOperator } from '../../operator/operator-command';
import { parseNodeKeyChoice } from './node-key-choice';

export const workersApproveCommand: Command = {
  name: 'approve',
  summary: 'approve a machine by its key fingerprint, listed as awaiting approval or not yet',
  usage: `Usage: gpu-share workers approve NAME --key SHA256:… [--json]

A machine that joins with the join token but a node key nobody approved waits, listed by
\`gpu-share workers list\` with its key fingerprint, address and hardware; it gets no run, no job and no
other member's address. Compare the fingerprint with the one its agent prints ("this machine's key is
SHA256:…"), then approve exactly that key: its next join (within a few seconds) is admitted and it trains.
An approved member can run code as the training user on every member machine, this one included.
A different key (swapped in since you looked) is not approved: both fingerprints are named.
A machine not listed with that key right now (not joined yet, or refused a place on a full list) is
pre-approved instead: its next join signed by exactly that key is admitted, within 24 hours
(\`gpu-share workers list\` shows pre-approvals; \`gpu-share workers revoke NAME\` takes one back).
--json prints {"workers": […], "awaiting": […]} as POST /v1/nodes/{name}/approve answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, node, fingerprint } = parseNodeKeyChoice(args, 'approve');
    return runOperator('gpu-share workers approve', values, io, async (client) => {
      const reply = await client.call('approveNode', [node], { fingerprint });
      if (values.json) printJson(io, reply);
      else if (reply.message) io.out(`${reply.message}\n`);
      else io.out(`Approved ${node} (${fingerprint}): it joins at its next try, within a few seconds.\n`);
      return 0;
    });
  },
};
