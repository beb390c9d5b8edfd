/**
 * Forgetting a dead worker (issue 25, housekeeping): every offline record (failed or left) of one node goes from
 * the Workers list and from state.db, so it stays gone after a restart. Refused, saying why, while the node is
 * online (any live record) or a member of a live run. What is NOT forgotten, by choice (docs/design.md, trust):
 * the node's pinned key and the name's binding to its machine. The same machine joining again with its key is
 * admitted as before; another key under that name is still held back for approval (a key conflict), so forgetting
 * never lets a different machine take the name silently. `workers revoke` is the way to drop the key as well.
 */
import { ApiProblem } from '../common';
import type { RunSnapshot, WorkerSnapshot } from '../../../../src-shared/training';

export interface ForgetNodeDeps {
  pool: { snapshots(): WorkerSnapshot[]; forget(workerId: number): boolean };
  runs: { memberIds(): Set<number>; runs(): RunSnapshot[] };
  messages: { event(kind: 'worker-forgotten', severity: 'info', message: string, ctx: { node: string }): void };
}

const OFFLINE = new Set(['failed', 'left']);

/** The ids forgotten (oldest first); throws ApiProblem 404 for a node never seen, 409 for one online or training. */
export function forgetNode(deps: ForgetNodeDeps, node: string): number[] {
  const records = deps.pool.snapshots().filter((w) => w.node === node);
  if (records.length === 0) throw new ApiProblem(404, `no worker of node "${node}" is known to this coordinator (see \`gpu-share workers list\`)`);
  const online = records.find((w) => !OFFLINE.has(w.state));
  if (online) throw new ApiProblem(409, `${node} is online (worker ${online.id} is ${online.state}): only an offline worker can be forgotten; drain it first (\`gpu-share workers drain ${node}\`) and forget it once it has left`);
  const members = deps.runs.memberIds();
  const training = records.find((w) => members.has(w.id));
  if (training) {
    const run = deps.runs.runs().find((r) => r.workerIds.includes(training.id));
    throw new ApiProblem(409, `${node} (worker ${training.id}) is still a member of live run ${run ? `"${run.spec.name}" (${run.id})` : '?'}: stop the run, or wait until it relaunches without it, then forget it`);
  }
  const ids = records.filter((w) => deps.pool.forget(w.id)).map((w) => w.id);
  deps.messages.event('worker-forgotten', 'info', `Forgot ${node} (offline; worker ${ids.join(', ')}): its key stays pinned, so only that machine can join as ${node} again`, { node });
  return ids;
}
