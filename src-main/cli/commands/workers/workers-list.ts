/** `gpu-share workers list`: every worker the coordinator knows, with its state and why, and what it is doing. */
import type { JobSnapshot } from '../../../../src-shared/jobs/types';
import { workerActivities, type WorkerActivity } from '../../../../src-shared/nodes/activity';
import { describeAwaitingHardware, type AwaitingMachine, type PreApproval } from '../../../../src-shared/nodes/awaiting-machine';
import type { WorkerSnapshot } from '../../../../src-shared/training';
import { noMorePositionals, parseCommandLine, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { OperatorFailure } from '../../operator/operator-failure';
import type { OperatorClient } from '../../operator/operator-client';
import { cell, formatTable, humanAgo } from '../../text-format';
import { allJobs } from '../jobs/job-pages';
import { stepsDone } from '../../../../src-shared/runs/steps-done';
import { shownWorkerCause } from '../../../../src-shared/nodes/worker-cause';

function gpusText(w: WorkerSnapshot): string {
  if (w.gpus.length === 0) return 'CPU only';
  return w.gpus.map((g) => (g.vramTotalMb ? `${g.name} ${Math.round(g.vramTotalMb / 1024)} GB` : g.name)).join(', ');
}

/** One row per worker; DOING is its entry of `activities` (workerActivities): run member, job, idle, offline. */
export function formatWorkersTable(workers: readonly WorkerSnapshot[], now: number, activities: readonly WorkerActivity[] = []): string {
  if (workers.length === 0) {
    return 'No workers yet. This machine joins by itself unless GPU Share was started with --no-local-worker; other machines join with the command `gpu-share serve` prints.\n';
  }
  const rows = [...workers]
    .sort((a, b) => a.id - b.id)
    .map((w) => [
      String(w.id),
      `${w.node}${w.local ? ' (this machine)' : ''}`,
      w.state,
      activities.find((a) => a.workerId === w.id)?.text ?? '-',
      gpusText(w),
      w.address ?? '-',
      humanAgo(w.lastHeartbeatAt, now),
      // Steps done, as every other step figure (the trainer's last line says index 299 of a 300-step run).
      cell(w.step === null ? null : stepsDone(w.step)),
      shownWorkerCause(w) || '-',
    ]);
  return `${formatTable(['ID', 'NODE', 'STATE', 'DOING', 'GPUS', 'ADDRESS', 'HEARTBEAT', 'STEP', 'WHY'], rows).join('\n')}\n`;
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

/** Keys approved ahead of their machine's first join, with when each lapses; '' when none. */
export function formatPreApprovalsTable(preApprovals: readonly PreApproval[], now: number): string {
  if (preApprovals.length === 0) return '';
  const rows = preApprovals.map((p) => [p.node, p.fingerprint, humanAgo(p.at, now), `in ${Math.max(1, Math.round((p.expiresAt - now) / 60_000))} min`]);
  return `\nPre-approved (admitted at their next join with exactly this key):\n${formatTable(['NODE', 'KEY', 'APPROVED', 'LAPSES'], rows).join('\n')}\n`;
}

/** The jobs placed on workers (claimed and running); none from a coordinator without the job queue (404). */
async function placedJobs(client: OperatorClient): Promise<JobSnapshot[]> {
  try {
    return [...(await allJobs(client, 'running')), ...(await allJobs(client, 'claimed'))];
  } catch (error) {
    if (error instanceof OperatorFailure && error.kind === 'not-found') return [];
    throw error;
  }
}

export const workersListCommand: Command = {
  name: 'list',
  summary: 'every worker: state and why, what it is doing, GPUs, address, last heartbeat',
  usage: `Usage: gpu-share workers list [--json]

Lists the workers that joined the coordinator: id, node, state (syncing, active, draining, failed, left), what
it is doing (member of run "r1" on GPU 0, job "r16" on GPU 1 (step 30 of 60), idle, offline), GPUs, address,
last heartbeat, step and why; then the machines awaiting approval (and new keys held back), with their key
fingerprint, address and hardware; then the keys pre-approved (\`workers approve\` of a machine not listed).
--json prints {"workers": [WorkerSnapshot, …], "awaiting": [AwaitingMachine, …], "preApprovals": [PreApproval, …],
"activity": [WorkerActivity, …]}
(GET /v1/state, docs/api.md; activity: one entry per worker and per machine awaiting approval, with its runs,
jobs and the DOING sentence).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    noMorePositionals(positionals);
    return runOperator('gpu-share workers list', values, io, async (client) => {
      const { workers, awaiting, preApprovals, runs } = await client.call('state', [], undefined);
      const activity = workerActivities({ workers, runs, jobs: await placedJobs(client), awaiting });
      if (values.json) printJson(io, { workers, awaiting, preApprovals, activity });
      else io.out(formatWorkersTable(workers, Date.now(), activity) + formatAwaitingTable(awaiting, Date.now()) + formatPreApprovalsTable(preApprovals, Date.now()));
      return 0;
    });
  },
};
