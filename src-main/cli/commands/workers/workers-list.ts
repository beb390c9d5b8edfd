/** `gpu-share workers list`: every worker the coordinator knows, with its state and why. */
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

export const workersListCommand: Command = {
  name: 'list',
  summary: 'every worker: state and why, GPUs, address, last heartbeat',
  usage: `Usage: gpu-share workers list [--json]

Lists the workers that joined the coordinator: id, node, state (syncing, active, draining, failed, left) and
why, GPUs, address, last heartbeat, step.
--json prints {"workers": [WorkerSnapshot, …]} (the workers of GET /v1/state, docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    noMorePositionals(positionals);
    return runOperator('gpu-share workers list', values, io, async (client) => {
      const { workers } = await client.call('state', [], undefined);
      if (values.json) printJson(io, { workers });
      else io.out(formatWorkersTable(workers, Date.now()));
      return 0;
    });
  },
};
