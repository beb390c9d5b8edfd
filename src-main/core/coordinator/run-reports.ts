/**
 * What agents report about the run they train: output, their process starting and exiting, GPU residency.
 * An exit that is not a clean finish costs the run one restart and relaunches it once the other members have
 * proved they are alive.
 */
import { sanitizeRemoteOutput } from '../../../src-shared/terminal-text';
import type { Report } from '../../../src-shared/worker-protocol';
import type { OutputBudget } from './output-budget';
import type { RunController } from './run-controller';
import { capitalize, describeExit, describeExitStatus } from './user-messages';
import type { WorkerRecord } from './worker-registry';

export function handleReport(ctl: RunController, budget: OutputBudget, rec: WorkerRecord, r: Report): void {
  const { pool, feed, messages, clock } = ctl.opts;
  const run = ctl.find(r.runId);
  if (!run) return;
  const current = ctl.live === run && run.state === 'running' && r.generation === run.generation;
  const member = current ? run.members.get(rec.id) : undefined;
  switch (r.type) {
    case 'output': {
      // Another machine's output must not erase the terminal or forge lines (cursor moves, OSC, lone CR).
      const clean = rec.sameMachine ? r.data : sanitizeRemoteOutput(r.data, rec.outputState);
      const { kept, notice } = budget.take(rec.id, rec.node, clean);
      const data = kept + (notice ?? '');
      if (!data) return;
      run.output.append(rec.id, rec.node, data);
      ctl.store?.appendOutput(run.id, rec.id, rec.node, data);
      // The curve is read from the output itself: every progress line, not the heartbeats' samples.
      run.telemetry.onOutput(rec.id, rec.node, r.generation, kept);
      ctl.progressed(run);
      feed.broadcast({ type: 'output', runId: run.id, workerId: rec.id, node: rec.node, data });
      return;
    }
    case 'started':
      if (member) {
        member.started = true;
        member.pid = r.pid;
      }
      return;
    case 'exited': {
      const pw = pool.worker(rec.id)!;
      if (pw.state === 'draining') {
        pool.finalizeRemoval(rec.id, `drain finished: training ${describeExitStatus(r.exitCode, r.signal)}`);
        feed.workersChanged('state');
        return;
      }
      if (!member || r.requested) return;
      member.exit = { exitCode: r.exitCode, signal: r.signal };
      if (r.exitCode === 0 && r.signal === null) {
        if ([...run.members.values()].every((m) => m.exit && m.exit.exitCode === 0 && m.exit.signal === null)) ctl.finishRun(run);
        return;
      }
      if (run.pendingRestart) return; // this generation already failed: one restart for it
      const cause = describeExit(rec.node, r.exitCode, r.signal);
      ctl.say(run, cause);
      run.telemetry.onWorkerFailed(rec.id, rec.node, true);
      run.restartsUsed += 1;
      if (run.restartsUsed > run.spec.maxRestarts) {
        ctl.failRun(run, `${cause} and all ${run.spec.maxRestarts} restarts are used`);
        return;
      }
      const others = run.workerIds.filter((id) => id !== rec.id && !run.members.get(id)?.exit);
      run.pendingRestart = { cause, since: clock.monotonic(), waitingFor: new Set(others) };
      ctl.maybeRestart(run);
      return;
    }
    case 'residency': {
      if (ctl.live !== run || r.generation !== run.generation) return;
      run.residency[rec.id] = { status: r.status, detail: r.detail, pid: r.pid, usedMib: r.usedMib, checkedAt: clock.now() };
      const ctx = { workerId: rec.id, runId: run.id, generation: run.generation };
      if (r.status === 'pass') {
        messages.event('residency', 'info', `GPU resident on ${rec.node}: pid ${r.pid} holds ${r.usedMib ?? '?'} MiB`, ctx);
      } else {
        const detail = r.detail.replace(/^NOT on the GPU:\s*/i, '');
        messages.event('residency', 'error', `NOT on the GPU on ${rec.node}: ${detail}`, ctx);
        messages.notify(`Run "${run.spec.name}" is not on the GPU on ${rec.node}`, `${capitalize(detail)}.`.replace(/\.\.$/, '.'), 'error', { view: 'runs', runId: run.id });
      }
      ctl.emitRun(run);
      return;
    }
  }
}
