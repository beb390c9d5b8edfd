/** `gpu-share workers drain ID|NODE`: take a worker out of training; the run goes on without it. */
import type { WorkerSnapshot } from '../../../../src-shared/training';
import { parseCommandLine, UsageError, noMorePositionals, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import type { OperatorClient } from '../../operator/operator-client';
import { EXIT, OperatorFailure } from '../../operator/operator-failure';

const LIST_HINT = 'workers are listed by `gpu-share workers list`';

/** The worker `given` names: an id, or a node name (its newest incarnation that is not gone). */
async function resolveWorker(client: OperatorClient, given: string): Promise<number> {
  if (/^\d+$/.test(given)) return Number(given);
  const { workers } = await client.call('state', [], undefined);
  const named = workers.filter((w: WorkerSnapshot) => w.node === given);
  const pick = named.find((w) => w.state === 'active') ?? named.find((w) => w.state !== 'left' && w.state !== 'failed') ?? named.at(-1);
  if (!pick) throw new OperatorFailure(`no worker named "${given}" on this coordinator; ${LIST_HINT}`, EXIT.notFound, 'not-found');
  return pick.id;
}

export const workersDrainCommand: Command = {
  name: 'drain',
  summary: 'take a worker out of training; the run carries on without it',
  usage: `Usage: gpu-share workers drain ID|NODE [--json]

Drains the worker (by id, or by node name): it stops training and leaves, and the live run relaunches
without it at once — without using a restart. Only an active worker can be drained.
--json prints {"workers": [WorkerSnapshot, …]} as POST /v1/workers/{id}/drain answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    if (positionals.length === 0) throw new UsageError('give the worker to drain: its id or node name (see `gpu-share workers list`)');
    noMorePositionals(positionals, 1);
    return runOperator('gpu-share workers drain', values, io, async (client) => {
      const id = await resolveWorker(client, positionals[0]!);
      const reply = await client.call('drain', [id], undefined, `no worker ${id} on this coordinator; ${LIST_HINT}`);
      if (values.json) printJson(io, reply);
      else {
        const w = reply.workers.find((x) => x.id === id);
        io.out(`Draining worker ${id}${w ? ` (${w.node})` : ''}: it stops training and leaves; a live run relaunches without it.\n`);
      }
      return 0;
    });
  },
};
