/**
 * What agents report about the run they train: output, progress lines (parsed on the agent), their process
 * starting and exiting, GPU residency.
 * An exit that is not a clean finish costs the run one restart and relaunches it once the other members have
 * proved they are alive.
 */
import { sanitizeRemoteOutput } from '../../../../src-shared/terminal-text';
import type { Report } from '../../../../src-shared/worker-protocol';
import type { Clock } from '../../../platform/ports';
import { capitalize, type ChangeFeed, describeExit, describeExitStatus, type UserMessages } from '../common';
import type { Membership, MemberRecord } from '../membership';
import type { OutputBudget } from './output-budget';
import type { RunApplier } from './run-applier';
import type { RunRecord } from './run-record';
import { storeHostRelaunched, storeLauncherExited } from './store-handover';

/** What a report needs of the controller: the run it names, and the applier to act on that run alone. */
export interface RunReportContext {
  clock: Clock;
  pool: Pick<Membership, 'worker' | 'finalizeRemoval'>;
  feed: Pick<ChangeFeed, 'workersChanged'>;
  messages: Pick<UserMessages, 'event' | 'notify'>;
  applier: Pick<RunApplier, 'say' | 'output' | 'fail' | 'finish' | 'emit' | 'releaseHeldStarts'>;
  find(runId: string): RunRecord | undefined;
  /** The run's progress changed (recomputed and sent at most once a second). */
  progressed(run: RunRecord): void;
  /** Relaunches a failed generation once its other members proved alive (run-controller.ts). */
  maybeRestart(run: RunRecord): void;
  /** A worker's `prepared` report about the run's project (run-project-gate.ts). */
  prepared(run: RunRecord, rec: MemberRecord, report: Extract<Report, { type: 'prepared' }>): void;
}

export function handleReport(ctx: RunReportContext, budget: OutputBudget, rec: MemberRecord, r: Report): void {
  const { pool, feed, messages, clock, applier } = ctx;
  if (!('runId' in r)) return; // not about a run (measured links): the coordinator service takes those
  const run = ctx.find(r.runId);
  if (!run) return;
  if (r.type === 'prepared') {
    ctx.prepared(run, rec, r);
    return;
  }
  const current = run.state === 'running' && r.generation === run.generation;
  const member = current ? run.members.get(rec.id) : undefined;
  switch (r.type) {
    case 'output': {
      // Another machine's output must not erase the terminal or forge lines (cursor moves, OSC, lone CR).
      const clean = rec.sameMachine ? r.data : sanitizeRemoteOutput(r.data, rec.outputState);
      const { kept, notice } = budget.take(rec.id, rec.node, clean);
      const data = kept + (notice ?? '');
      if (!data) return;
      applier.output(run, rec.id, rec.node, data);
      // An agent that sends its progress lines parsed says so on its output; an older one's are read from the output.
      if (r.progressSent) return;
      run.telemetry.onOutput(rec.id, rec.node, r.generation, kept);
      ctx.progressed(run);
      return;
    }
    case 'progress':
      // The curve takes every progress line (parsed on the agent), not the heartbeats' samples.
      run.telemetry.onProgress(rec.id, rec.node, r.generation, r.points);
      ctx.progressed(run);
      return;
    case 'started':
      if (member) {
        member.started = true;
        member.pid = r.pid;
      }
      if (storeHostRelaunched(run, rec.id, r.generation)) applier.releaseHeldStarts(run, true);
      return;
    case 'exited': {
      if (storeLauncherExited(run, rec.id, r.generation)) applier.releaseHeldStarts(run, true);
      const pw = pool.worker(rec.id)!;
      if (pw.state === 'draining') {
        pool.finalizeRemoval(rec.id, `drain finished: training ${describeExitStatus(r.exitCode, r.signal)}`);
        feed.workersChanged('state');
        return;
      }
      if (!member || r.requested) return;
      member.exit = { exitCode: r.exitCode, signal: r.signal };
      if (r.exitCode === 0 && r.signal === null) {
        if ([...run.members.values()].every((m) => m.exit && m.exit.exitCode === 0 && m.exit.signal === null)) applier.finish(run);
        return;
      }
      if (run.pendingRestart) return; // this generation already failed: one restart for it
      const cause = describeExit(rec.node, r.exitCode, r.signal);
      applier.say(run, cause);
      run.telemetry.onWorkerFailed(rec.id, rec.node, true, clock.now());
      run.restartsUsed += 1;
      if (run.restartsUsed > run.spec.maxRestarts) {
        applier.fail(run, `${cause} and all ${run.spec.maxRestarts} restarts are used`);
        return;
      }
      const others = run.workerIds.filter((id) => id !== rec.id && !run.members.get(id)?.exit);
      run.pendingRestart = { cause, since: clock.monotonic(), waitingFor: new Set(others) };
      ctx.maybeRestart(run);
      return;
    }
    case 'residency': {
      if (run.state !== 'running' || r.generation !== run.generation) return;
      run.residency[rec.id] = { status: r.status, detail: r.detail, pid: r.pid, usedMib: r.usedMib, checkedAt: clock.now() };
      const ctx = { workerId: rec.id, runId: run.id, generation: run.generation };
      if (r.status === 'pass') {
        messages.event('residency', 'info', `GPU resident on ${rec.node}: pid ${r.pid} holds ${r.usedMib ?? '?'} MiB`, ctx);
      } else {
        const detail = r.detail.replace(/^NOT on the GPU:\s*/i, '');
        messages.event('residency', 'error', `NOT on the GPU on ${rec.node}: ${detail}`, ctx);
        messages.notify(`Run "${run.spec.name}" is not on the GPU on ${rec.node}`, `${capitalize(detail)}.`.replace(/\.\.$/, '.'), 'error', { view: 'runs', runId: run.id });
      }
      applier.emit(run);
      return;
    }
  }
}
