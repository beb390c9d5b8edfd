/**
 * What runs do when workers fail: each run that lost a member is charged one restart per incident and relaunched
 * without them (or paused, or failed), and the user is told; members that took a start but never began are failed
 * like silent ones. A run the failed worker was not in is not touched.
 */
import type { RunState } from '../../../../src-shared/training';
import type { Clock } from '../../../platform/ports';
import { type ChangeFeed, plural, type UserMessages } from '../common';
import type { Membership } from '../membership';
import type { RunApplier } from './run-applier';
import type { LaunchWhy, RunRecord } from './run-record';

/**
 * A member whose start was handed out but that reported neither `started` nor `exited` within this long is
 * failed like a silent one: the others wait in the rendezvous for it, so without a bound they would wait forever.
 * Launching (even after stopping the previous generation's process with its grace) takes a few seconds at most.
 */
export const START_TIMEOUT_MS = 30_000;

/** What failure handling needs of the controller: the live runs, one way to re-plan a run, the applier. */
export interface RunFailureContext {
  clock: Clock;
  pool: Pick<Membership, 'worker' | 'activeCount' | 'failWorker'>;
  feed: Pick<ChangeFeed, 'workersChanged'>;
  messages: Pick<UserMessages, 'notify'>;
  applier: Pick<RunApplier, 'say' | 'fail'>;
  liveRuns(): readonly RunRecord[];
  reconcile(run: RunRecord, cause: string, why: LaunchWhy, force: boolean): void;
}

type Outcome = 'rebalanced' | 'paused' | 'failed' | 'none';

/**
 * After workers were declared failed: every running run that lost a member is charged a restart, relaunched or
 * paused or failed; then the user is told. Failures found in one check are one incident and cost a run one
 * restart; a failure of a worker that never started the generation launched to recover from the previous failure
 * is the same incident, not a new one.
 */
export function afterFailures(ctx: RunFailureContext, failedIds: number[], notifyCauses: Map<number, string>, runCause?: string): void {
  for (const id of failedIds) {
    const rec = ctx.pool.worker(id);
    if (rec) {
      rec.mailbox.clear();
      rec.progress = null;
    }
  }
  ctx.feed.workersChanged('state');
  const outcomes = new Map<number, Outcome>();
  for (const run of [...ctx.liveRuns()]) {
    if (run.state !== 'running') continue;
    const lost = failedIds.filter((id) => run.workerIds.includes(id));
    if (lost.length === 0) continue;
    const outcome = runLostMembers(ctx, run, lost, runCause);
    for (const id of lost) if (!outcomes.has(id)) outcomes.set(id, outcome);
  }
  const remaining = ctx.pool.activeCount();
  const tails = { rebalanced: ', shards rebalanced.', paused: '; the run is paused.', failed: '; the run failed.', none: '.' };
  for (const id of failedIds) {
    const cause = notifyCauses.get(id);
    if (!cause) continue; // never active: nothing the user was counting on
    const node = ctx.pool.worker(id)!.node;
    const tail = tails[outcomes.get(id) ?? 'none'];
    ctx.messages.notify(`Worker ${node} failed`, `${cause}. ${plural(remaining, 'worker')} left${tail}`, 'error', { view: 'workers', workerId: id });
  }
}

function runLostMembers(ctx: RunFailureContext, run: RunRecord, lost: number[], runCause: string | undefined): Outcome {
  const recovering = run.launchedBy === 'failure' || run.launchedBy === 'restart';
  const sameIncident = run.pendingRestart !== null || (recovering && lost.every((id) => !run.members.get(id)?.started));
  if (!sameIncident) run.restartsUsed += 1;
  const nodeOf = (id: number) => ctx.pool.worker(id)!.node;
  const cause = runCause ?? `worker ${lost.map(nodeOf).join(', ')} failed`;
  lost.forEach((id, i) => run.telemetry.onWorkerFailed(id, nodeOf(id), !sameIncident && i === 0, ctx.clock.now()));
  for (const id of lost) ctx.applier.say(run, `worker ${nodeOf(id)} failed: ${ctx.pool.worker(id)?.stateCause ?? 'failed'}`);
  if (run.restartsUsed > run.spec.maxRestarts) {
    ctx.applier.fail(run, `${cause} and all ${run.spec.maxRestarts} restarts are used`);
    return 'failed';
  }
  ctx.reconcile(run, cause, 'failure', true);
  return (run.state as RunState) === 'paused' ? 'paused' : 'rebalanced';
}

/**
 * Fails the members of the run's current generation that took their start more than START_TIMEOUT_MS ago and
 * have reported neither `started` nor `exited` (their spawn failed and the report got lost, or a bug), the
 * same way as a silent worker: it goes `failed` (its agent must join again, which kills whatever it runs),
 * and every run it was in is charged as for any failure and relaunched without it.
 */
export function expireUnstarted(ctx: RunFailureContext, run: RunRecord): void {
  if (run.state !== 'running' || run.pendingRestart) return;
  const now = ctx.clock.monotonic();
  const stuck: number[] = [];
  for (const [id, m] of run.members) {
    if (m.started || m.exit || m.startSentAt === null || now - m.startSentAt <= START_TIMEOUT_MS) continue;
    if (ctx.pool.worker(id)?.state === 'active') stuck.push(id);
  }
  if (stuck.length === 0) return;
  const within = `run "${run.spec.name}" generation ${run.generation} within ${Math.round(START_TIMEOUT_MS / 1000)} s`;
  const causes = new Map<number, string>();
  for (const id of stuck) {
    ctx.pool.failWorker(id, `did not start ${within}`);
    causes.set(id, `Did not start ${within}`);
  }
  const names = stuck.map((id) => ctx.pool.worker(id)!.node).join(', ');
  afterFailures(ctx, stuck, causes, `worker ${names} did not start ${within}`);
}
