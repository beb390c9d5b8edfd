/**
 * The one place a run's decisions take effect. The controller decides (a generation from planGeneration, a hold, a
 * failure, the end); the applier queues the start/stop instructions, writes the `[gpu-share] …` line into the
 * run's output, persists the run and emits it, and tells people. It knows one run at a time: nothing here reaches
 * another run, so one run's pause or relaunch cannot touch another.
 */
import { offGpuWorkers } from '../../../../src-shared/runs/gpu-request';
import type { RunState } from '../../../../src-shared/training';
import { stepsOfTotal } from '../../../../src-shared/runs/steps-done';
import { capitalize, type CoordinatorStore, plural } from '../common';
import { launchGeneration } from './generation-launch';
import type { GenerationDecision } from './generation-plan';
import { clearMembers, refreshProgress, runSnapshot, type LaunchWhy, type RunRecord } from './run-record';
import { noteStoreStopping, takeHeldStarts } from './store-handover';
import type { RunApplierDeps } from './run-applier-deps';

/** Output lines the coordinator writes itself carry this node name and worker id. */
export const COORDINATOR_NODE = 'gpu-share';
export const COORDINATOR_OUTPUT_ID = -1;

export type { RunApplierDeps } from './run-applier-deps';

export type EndState = Extract<RunState, 'finished' | 'failed' | 'stopped'>;

export class RunApplier {
  private store: CoordinatorStore | null = null;

  constructor(readonly deps: RunApplierDeps) {}

  /** From now on every run change and output line is kept in `store` too. */
  attachStore(store: CoordinatorStore | null): void {
    this.store = store;
  }

  /** Starts the generation planGeneration decided, or holds the run when none of its members can host the store. */
  apply(run: RunRecord, decision: GenerationDecision, why: LaunchWhy): void {
    if (decision.kind === 'launch') launchGeneration(this, run, decision.plan, why);
    else this.hold(run, decision.reason);
  }

  /** The run cannot start its next generation (no rendezvous host, not enough capacity): it waits, saying why. */
  hold(run: RunRecord, reason: string): void {
    this.stopMembers(run, `run waiting: ${reason}`);
    const wasRunning = run.state === 'running';
    const changed = run.stateCause !== reason;
    run.state = run.generation > 0 ? 'paused' : 'waiting';
    run.stateCause = reason;
    clearMembers(run);
    if (changed) {
      this.say(run, `waiting: ${reason}`);
      this.deps.messages.event('run-paused', 'warning', `Run "${run.spec.name}" cannot start its next generation: ${reason}`, { runId: run.id, generation: run.generation });
      this.deps.messages.notify(`Run "${run.spec.name}" is waiting`, `${capitalize(reason)}.`, 'warning', { view: 'runs', runId: run.id });
    }
    this.emit(run);
    if (wasRunning) this.deps.onReleased?.(run);
  }

  /** A running run fell below min_workers: its other members stop and it resumes when enough are back. */
  pause(run: RunRecord, cause: string): void {
    this.stopMembers(run, 'run paused: below min_workers');
    run.state = 'paused';
    run.stateCause = cause;
    clearMembers(run);
    const { messages } = this.deps;
    messages.event('run-paused', 'warning', `Run "${run.spec.name}" paused: ${cause}`, { runId: run.id, generation: run.generation });
    this.say(run, `paused: ${cause}; it resumes when enough workers are back`);
    messages.notify(`Run "${run.spec.name}" paused`, `${capitalize(cause)}. It resumes when enough workers are back.`, 'warning', { view: 'runs', runId: run.id });
    this.emit(run);
    this.deps.onReleased?.(run);
  }

  /** A waiting or paused run's reason changed: kept and sent (nothing else happens to it). */
  waitingCause(run: RunRecord, cause: string): void {
    if (run.stateCause === cause) return;
    run.stateCause = cause;
    this.emit(run);
  }

  /** Hands out the starts held for the old store host (store-handover.ts) once it is gone or waited for long enough. */
  releaseHeldStarts(run: RunRecord, storeGone: boolean): void {
    for (const [workerId, plan] of takeHeldStarts(run, this.deps.clock.monotonic(), storeGone)) {
      this.deps.pool.worker(workerId)?.mailbox.queue({ kind: 'start', plan });
    }
  }

  /** Tells the current generation's members that are still reachable to stop it. */
  stopMembers(run: RunRecord, reason: string): void {
    if (run.state !== 'running') return;
    noteStoreStopping(run);
    for (const id of run.workerIds) {
      const pw = this.deps.pool.worker(id);
      const rec = this.deps.pool.worker(id);
      if (!pw || !rec || (pw.state !== 'active' && pw.state !== 'syncing')) continue;
      if (run.members.get(id)?.exit) continue; // its process has already ended
      rec.mailbox.queueStop(run.id, run.generation, reason);
    }
  }

  end(run: RunRecord, state: EndState, cause: string): void {
    this.refresh(run);
    const wasRunning = run.state === 'running';
    run.state = state;
    run.stateCause = cause;
    run.endedAt = this.deps.clock.now();
    run.reconcileDueAt = null;
    clearMembers(run);
    this.emit(run);
    if (wasRunning) this.deps.onReleased?.(run);
  }

  fail(run: RunRecord, cause: string): void {
    this.stopMembers(run, `run failed: ${cause}`);
    this.end(run, 'failed', cause);
    this.deps.messages.event('run-failed', 'error', `Run "${run.spec.name}" failed: ${cause}`, { runId: run.id, generation: run.generation });
    this.say(run, `run failed: ${cause}`);
    this.deps.messages.notify(`Run "${run.spec.name}" failed`, `${capitalize(cause)}.`, 'error', { view: 'runs', runId: run.id });
  }

  finish(run: RunRecord): void {
    this.refresh(run);
    const step = run.progress?.step;
    const n = run.workerIds.length;
    // Asked for GPUs, but the residency probe found it on the CPU somewhere: the end says so, as a warning.
    const offGpu = run.spec.useGpus ? offGpuWorkers(run.residency).map((id) => this.deps.pool.worker(id)?.node ?? `worker ${id}`) : [];
    const onCpu = offGpu.length > 0 ? `, but NOT on the GPU on ${offGpu.join(', ')}: it trained on the CPU there although "Use GPUs" was asked for` : '';
    this.end(run, 'finished', `${n === 1 ? 'its worker' : `all ${n} workers`} finished (exit code 0)${onCpu}`);
    const loss = run.progress?.loss;
    const detail = [step !== undefined ? `step ${stepsOfTotal(step, run.progress?.totalSteps ?? null)}` : null, loss !== null && loss !== undefined ? `loss ${loss.toPrecision(4)}` : null, plural(run.restartsUsed, 'restart') + ' used']
      .filter(Boolean)
      .join(', ');
    const { messages } = this.deps;
    const severity = onCpu ? 'warning' : 'info';
    const title = onCpu ? `Run "${run.spec.name}" finished on the CPU` : `Run "${run.spec.name}" finished`;
    messages.event('run-finished', severity, `Run "${run.spec.name}" finished: ${detail}${onCpu}`, { runId: run.id, generation: run.generation });
    this.say(run, `finished: ${detail}${onCpu}`);
    messages.notify(title, `${capitalize(detail)}${onCpu}.`, severity, { view: 'runs', runId: run.id });
  }

  /** Folds members' progress into the run's (see run-record.ts). */
  refresh(run: RunRecord): void {
    refreshProgress(run);
  }

  /**
   * A line from the coordinator itself in the run's output (`[gpu-share] relaunching as generation 2 …`), so
   * the output says what happened to the run between the trainers' lines.
   */
  say(run: RunRecord, text: string): void {
    this.output(run, COORDINATOR_OUTPUT_ID, COORDINATOR_NODE, `${text}\r\n`);
  }

  /** Output of one worker (or the coordinator) in the run: kept, persisted and streamed. */
  output(run: RunRecord, workerId: number, node: string, data: string): void {
    // Stamped here, as received: the page and `runs logs --timestamps` show this time, not when they drew it.
    const at = this.deps.clock.now();
    run.output.append(workerId, node, data, at);
    this.store?.appendOutput(run.id, workerId, node, data, at);
    this.deps.feed.broadcast({ type: 'output', runId: run.id, workerId, node, data, at });
  }

  /** The run changed: persisted and sent to listeners. */
  emit(run: RunRecord): void {
    this.deps.feed.runSent(run.id);
    if (!this.deps.feed.hasListeners && !this.store) return;
    this.refresh(run);
    const snapshot = runSnapshot(run);
    this.store?.saveRun(snapshot);
    this.deps.feed.broadcast({ type: 'run', run: snapshot });
  }
}
