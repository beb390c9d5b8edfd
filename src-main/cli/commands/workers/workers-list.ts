/** `gpu-share workers list`: every worker the coordinator knows, with its state and why. */
import { describeAwaitingHardware, type AwaitingMachine } from '../../../../src-shared/nodes/awaiting-machine';
import type { WorkerSnapshot } from '../../../../src-shared/training';
import { noMorePositionals, parseCommandLine, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { cell, formatTable, humanAgo } from '../../text-format';

function gpusText(w: WorkerSnapshot): string {
  if (w.gpus.length === 0) return 'CPU only';
  return w.gpus.map((g) => (g.vramTotalMb ? `${g.name} ${Math.round(g.vramTotalMb / 1024)} GB` : g.name)).join(', ');
}

export function formatWorkersTable(workers: readonly WorkerSnapshot[], now: number): string {
  if (workers.length === 0) {
    return 'No workers yet. This machine joins by itself unless GPU Share was started with --no-local-worker; other machines join with the command `gpu-share serve` prints.\n';
  }
  const rows = [...workers]
    .sort((a, b) => a.id - b.id)
    .map((w) => [
      String(w.id),
      `${w.node}${w.local ? ' (this machine)' : ''}`,
      w.state,
      gpusText(w),
      w.address ?? '-',
      humanAgo(w.lastHeartbeatAt, now),
      cell(w.step),
      w.stateCause || '-',
    ]);
  return `${formatTable(['ID', 'NODE', 'STATE', 'GPUS', 'ADDRESS', 'HEARTBEAT', 'STEP', 'WHY'], rows).join('\n')}\n`;
}

/** Machines awaiting approval (and keys held back), with what to run to approve each; '' when none. */
export function formatAwaitingTable(awaiting: readonly AwaitingMachine[], now: number): string {
  if (awaiting.length === 0) return '';
  const rows = awaiting.map((a) => [a.node, a.heldBackFrom ? 'new key (held back)' : 'awaiting approval', a.fingerprint, a.address ?? '-', describeAwaitingHardware(a.hardware), humanAgo(a.lastSeen, now)]);
  const first = awaiting[0]!;
  const how = first.heldBackFrom ? `gpu-share workers accept-key ${first.node} --key ${first.fingerprint}` : `gpu-share workers approve ${first.node} --key ${first.fingerprint}`;
  return (
    `\nAwaiting approval (no run, no job, no other member's address until approved):\n` +
    `${formatTable(['NODE', 'STATE', 'KEY', 'ADDRESS', 'HARDWARE', 'SEEN'], rows).join('\n')}\n` +
    `Compare each key with the one its agent prints, then e.g. \`${how}\`.\n`
  );
}

export const workersListCommand: Command = {
  name: 'list',
  summary: 'every worker: state and why, GPUs, address, last heartbeat',
  usage: `Usage: gpu-share workers list [--json]

Lists the workers that joined the coordinator: id, node, state (syncing, active, draining, failed, left) and
why, GPUs, address, last heartbeat, step; then the machines awaiting approval (and new keys held back), with
their key fingerprint, address and hardware.
--json prints {"workers": [WorkerSnapshot, …], "awaiting": [AwaitingMachine, …]} (GET /v1/state, docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    noMorePositionals(positionals);
    return runOperator('gpu-share workers list', values, io, async (client) => {
      const { workers, awaiting } = await client.call('state', [], undefined);
      if (values.json) printJson(io, { workers, awaiting });
      else io.out(formatWorkersTable(workers, Date.now()) + formatAwaitingTable(awaiting, Date.now()));
      return 0;
    });
  },
};
