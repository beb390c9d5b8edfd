/**
 * What a run does when workers fail: one restart per incident, relaunch without them (or pause, or fail the
 * run), and tell the user; and members that took a start but never began are failed like silent ones.
 */
import type { RunState } from '../../../src-shared/training';
import type { RunController } from './run-controller';
import type { RunRecord } from './run-record';
import { plural } from './user-messages';

/**
 * A member whose start was handed out but that reported neither `started` nor `exited` within this long is
 * failed like a silent one: the others wait in the rendezvous for it, so without a bound they would wait forever.
 * Launching (even after stopping the previous generation's process with its grace) takes a few seconds at most.
 */
export const START_TIMEOUT_MS = 30_000;

/**
 * After workers were declared failed: charge a restart if the live run lost a member, relaunch or pause
 * or fail it, then tell the user. Failures found in one check are one incident and cost one restart; a
 * failure of a worker that never started the generation launched to recover from the previous failure is
 * the same incident, not a new one.
 */
export function afterFailures(ctl: RunController, failedIds: number[], notifyCauses: Map<number, string>, runCause?: string): void {
  const run = ctl.live;
  let runOutcome: 'rebalanced' | 'paused' | 'failed' | 'none' = 'none';
  for (const id of failedIds) {
    const rec = ctl.opts.workers.get(id);
    if (rec) {
      rec.mailbox.clear();
      rec.progress = null;
    }
  }
  ctl.opts.feed.workersChanged('state');
  if (run && run.state === 'running') {
    const lost = failedIds.filter((id) => run.workerIds.includes(id));
    if (lost.length > 0) {
      const recovering = run.launchedBy === 'failure' || run.launchedBy === 'restart';
      const sameIncident = run.pendingRestart !== null || (recovering && lost.every((id) => !run.members.get(id)?.started));
      if (!sameIncident) run.restartsUsed += 1;
      const names = lost.map((id) => ctl.opts.workers.get(id)!.node).join(', ');
      const cause = runCause ?? `worker ${names} failed`;
      lost.forEach((id, i) => run.telemetry.onWorkerFailed(id, ctl.opts.workers.get(id)!.node, !sameIncident && i === 0));
      for (const id of lost) ctl.say(run, `worker ${ctl.opts.workers.get(id)!.node} failed: ${ctl.opts.pool.worker(id)?.stateCause ?? 'failed'}`);
      if (run.restartsUsed > run.spec.maxRestarts) {
        ctl.failRun(run, `${cause} and all ${run.spec.maxRestarts} restarts are used`);
        runOutcome = 'failed';
      } else {
        ctl.reconcile(run, cause, 'failure', true);
        runOutcome = (run.state as RunState) === 'paused' ? 'paused' : 'rebalanced';
      }
    }
  }
  const remaining = ctl.opts.pool.activeCount();
  const tail = { rebalanced: ', shards rebalanced.', paused: '; the run is paused.', failed: '; the run failed.', none: '.' }[runOutcome];
  for (const id of failedIds) {
    const cause = notifyCauses.get(id);
    if (!cause) continue; // never active: nothing the user was counting on
    const node = ctl.opts.workers.get(id)!.node;
    ctl.opts.messages.notify(`Worker ${node} failed`, `${cause}. ${plural(remaining, 'worker')} left${tail}`, 'error', { view: 'workers', workerId: id });
  }
}

/**
 * Fails the members of the current generation that took their start more than START_TIMEOUT_MS ago and
 * have reported neither `started` nor `exited` (their spawn failed and the report got lost, or a bug), the
 * same way as a silent worker: it goes `failed` (its agent must join again, which kills whatever it runs),
 * the run is charged as for any failure and relaunched without it.
 */
export function expireUnstarted(ctl: RunController, run: RunRecord): void {
  if (run.state !== 'running' || run.pendingRestart) return;
  const now = ctl.opts.clock.monotonic();
  const stuck: number[] = [];
  for (const [id, m] of run.members) {
    if (m.started || m.exit || m.startSentAt === null || now - m.startSentAt <= START_TIMEOUT_MS) continue;
    if (ctl.opts.pool.worker(id)?.state === 'active') stuck.push(id);
  }
  if (stuck.length === 0) return;
  const within = `run "${run.spec.name}" generation ${run.generation} within ${Math.round(START_TIMEOUT_MS / 1000)} s`;
  const causes = new Map<number, string>();
  for (const id of stuck) {
    ctl.opts.pool.failWorker(id, `did not start ${within}`);
    causes.set(id, `Did not start ${within}`);
  }
  const names = stuck.map((id) => ctl.opts.workers.get(id)!.node).join(', ');
  afterFailures(ctl, stuck, causes, `worker ${names} did not start ${within}`);
}
