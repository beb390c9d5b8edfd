/**
 * The elastic pool: who is in the cluster and in which state, with entrenar's semantics (seed 001) plus what
 * a long-lived desktop cluster needs on top — incarnations for workers that come back, a generation counter
 * for the active set, and a human cause on every transition. Pure: time comes from the injected Clock and
 * nothing here does I/O, so the service and the property tests drive it directly.
 *
 *   syncing ──first heartbeat──▶ active ──drain──▶ draining ──exit/leave──▶ left
 *                                  │
 *                                  └──no heartbeat for > timeout──▶ failed ──join again──▶ syncing (incarnation+1)
 */
import type { WorkerState } from '../../../src-shared/training';
import { assignShards, type ShardAssignment } from '../../../src-shared/shards';
import type { Clock } from '../../platform/ports';

export interface PoolWorker {
  /** Stable id: assigned once per machine, kept when it rejoins, never given to another machine. */
  readonly workerId: number;
  readonly nodeId: string;
  state: WorkerState;
  /** 1 on the first join, +1 each time the worker joins again after failing or leaving. */
  incarnation: number;
  gpuCount: number;
  backend: string;
  /** Epoch ms of the latest (re)join. */
  joinedAt: number;
  /** Training step current when the worker (re)joined. */
  joinedAtStep: number;
  /** Monotonic ms of the last heartbeat (or of the join, before the first one). */
  lastHeartbeat: number;
  /** Why the worker is in its state, in words ("no heartbeat for 5.2 s", "drained by user"). */
  stateCause: string;
  /** Order of the latest (re)join; shards and the rendezvous host follow it. */
  joinSeq: number;
}

export interface PoolTransition {
  workerId: number;
  nodeId: string;
  incarnation: number;
  /** null for a first join. */
  from: WorkerState | null;
  to: WorkerState;
  cause: string;
  /** True when a failed or departed worker joined again (its incarnation went up). */
  rejoined: boolean;
}

export type PoolJoinResult =
  | { ok: true; workerId: number; incarnation: number }
  | { ok: false; reason: string };

export interface PoolLimits {
  minWorkers: number;
  maxWorkers: number;
  heartbeatTimeoutMs: number;
}

export interface ElasticPoolOptions extends PoolLimits {
  clock: Clock;
  onTransition?: (transition: PoolTransition) => void;
}

/** States a worker is still part of the cluster in: it may heartbeat, report and be told what to do. */
export const LIVE_STATES: ReadonlySet<WorkerState> = new Set(['syncing', 'active', 'draining']);

/** "5.2 s" — one decimal, the precision a person reading a failure cause needs. */
export function formatSeconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}

export class ElasticPool {
  private readonly clock: Clock;
  private readonly onTransition: ((t: PoolTransition) => void) | undefined;
  private readonly list: PoolWorker[] = [];
  private readonly byId = new Map<number, PoolWorker>();
  private nextWorkerId = 0;
  private nextJoinSeq = 0;
  private limits: PoolLimits;
  private currentStep = 0;
  private reconfigPending = false;
  private gen = 0;

  constructor(opts: ElasticPoolOptions) {
    this.clock = opts.clock;
    this.onTransition = opts.onTransition;
    this.limits = { minWorkers: opts.minWorkers, maxWorkers: opts.maxWorkers, heartbeatTimeoutMs: opts.heartbeatTimeoutMs };
  }

  /** A run sets its own min/max and timeout while it is live; the pool falls back to the defaults after. */
  setLimits(limits: PoolLimits): void {
    this.limits = { ...limits };
  }

  getLimits(): PoolLimits {
    return { ...this.limits };
  }

  /** Bumped on every change of the active set; never goes down. */
  get generation(): number {
    return this.gen;
  }

  /** The reason a join would be refused now, or null when there is room. */
  fullReason(): string | null {
    const active = this.activeCount();
    if (active < this.limits.maxWorkers) return null;
    return `the run is full: ${active} of ${this.limits.maxWorkers} workers active (max_workers ${this.limits.maxWorkers})`;
  }

  /** A new machine joins: it gets the next id and starts syncing. Refused (with the reason) when the pool is full. */
  addWorker(nodeId: string, gpuCount: number, backend: string): PoolJoinResult {
    const full = this.fullReason();
    if (full) return { ok: false, reason: full };
    const now = this.clock.monotonic();
    const worker: PoolWorker = {
      workerId: this.nextWorkerId++,
      nodeId,
      state: 'syncing',
      incarnation: 1,
      gpuCount,
      backend,
      joinedAt: this.clock.now(),
      joinedAtStep: this.currentStep,
      lastHeartbeat: now,
      stateCause: 'joined',
      joinSeq: this.nextJoinSeq++,
    };
    this.list.push(worker);
    this.byId.set(worker.workerId, worker);
    this.reconfigPending = true;
    this.emit(worker, null, 'joined', false);
    return { ok: true, workerId: worker.workerId, incarnation: worker.incarnation };
  }

  /**
   * A worker known before the coordinator restarted, put back as it was remembered (not live: its agent must
   * join again). No transition is reported: nothing happened to it now. Later ids continue after it.
   */
  restoreWorker(w: { workerId: number; nodeId: string; incarnation: number; gpuCount: number; backend: string; joinedAt: number; state: 'failed' | 'left'; stateCause: string }): void {
    if (this.byId.has(w.workerId)) return;
    const worker: PoolWorker = {
      workerId: w.workerId,
      nodeId: w.nodeId,
      state: w.state,
      incarnation: w.incarnation,
      gpuCount: w.gpuCount,
      backend: w.backend,
      joinedAt: w.joinedAt,
      joinedAtStep: 0,
      lastHeartbeat: this.clock.monotonic(),
      stateCause: w.stateCause,
      joinSeq: this.nextJoinSeq++,
    };
    this.list.push(worker);
    this.byId.set(worker.workerId, worker);
    this.nextWorkerId = Math.max(this.nextWorkerId, w.workerId + 1);
  }

  /**
   * A worker that failed or left joins again: same id (one row per machine in the UI), next incarnation,
   * back to syncing at the end of the join order. Anything its old incarnation still sends is stale.
   */
  rejoinWorker(workerId: number, gpuCount: number, backend: string, cause = 'joined again'): PoolJoinResult {
    const w = this.byId.get(workerId);
    if (!w) return { ok: false, reason: `no worker ${workerId}` };
    if (LIVE_STATES.has(w.state)) return { ok: false, reason: `worker ${workerId} (${w.nodeId}) is still ${w.state}` };
    const full = this.fullReason();
    if (full) return { ok: false, reason: full };
    const from = w.state;
    w.incarnation += 1;
    w.gpuCount = gpuCount;
    w.backend = backend;
    w.joinedAt = this.clock.now();
    w.joinedAtStep = this.currentStep;
    w.lastHeartbeat = this.clock.monotonic();
    w.joinSeq = this.nextJoinSeq++;
    this.setState(w, 'syncing', cause, from, true);
    this.reconfigPending = true;
    return { ok: true, workerId: w.workerId, incarnation: w.incarnation };
  }

  /** Syncing → active (the worker's first heartbeat: hardware detected, ready to train). */
  activateWorker(workerId: number, cause = 'first heartbeat: ready to train'): boolean {
    const w = this.byId.get(workerId);
    if (!w || w.state !== 'syncing') return false;
    this.setState(w, 'active', cause);
    this.bumpGeneration();
    return true;
  }

  /** Active → draining: it finishes its step and stops; it no longer counts as active. */
  removeWorker(workerId: number, cause = 'drained by user'): boolean {
    const w = this.byId.get(workerId);
    if (!w || w.state !== 'active') return false;
    this.setState(w, 'draining', cause);
    this.reconfigPending = true;
    this.bumpGeneration();
    return true;
  }

  /** Draining → left, once its training process has stopped or it said goodbye. */
  finalizeRemoval(workerId: number, cause = 'drain finished'): boolean {
    const w = this.byId.get(workerId);
    if (!w || w.state !== 'draining') return false;
    this.setState(w, 'left', cause);
    return true;
  }

  /** Any live state → left: the agent said goodbye (shut down, or drained and done). */
  leaveWorker(workerId: number, cause: string): boolean {
    const w = this.byId.get(workerId);
    if (!w || !LIVE_STATES.has(w.state)) return false;
    const wasActive = w.state === 'active';
    this.setState(w, 'left', cause);
    if (wasActive) {
      this.reconfigPending = true;
      this.bumpGeneration();
    }
    return true;
  }

  /** Any live state → failed, for causes other than silence (its agent restarted under it, say). */
  /** Drops a failed or left worker from the pool altogether (bounded memory); false for any other state. */
  forget(workerId: number): boolean {
    const w = this.byId.get(workerId);
    if (!w || (w.state !== 'failed' && w.state !== 'left')) return false;
    this.byId.delete(workerId);
    const i = this.list.indexOf(w);
    if (i !== -1) this.list.splice(i, 1);
    return true;
  }

  failWorker(workerId: number, cause: string): boolean {
    const w = this.byId.get(workerId);
    if (!w || !LIVE_STATES.has(w.state)) return false;
    const wasActive = w.state === 'active';
    this.setState(w, 'failed', cause);
    this.reconfigPending = true;
    if (wasActive) this.bumpGeneration();
    return true;
  }

  /**
   * Declares silent workers gone. Strictly more than the timeout without a heartbeat (the seed's rule):
   * active or syncing → failed (returned); draining → left, since it was leaving anyway.
   */
  checkHeartbeats(): number[] {
    return this.expireSilent().map((f) => f.workerId);
  }

  /** checkHeartbeats() with what each failed worker was before and how long it had been silent. */
  expireSilent(): { workerId: number; from: WorkerState; silentMs: number }[] {
    const now = this.clock.monotonic();
    const timeout = this.limits.heartbeatTimeoutMs;
    const failed: { workerId: number; from: WorkerState; silentMs: number }[] = [];
    let activeChanged = false;
    for (const w of this.list) {
      const silent = now - w.lastHeartbeat;
      if (silent <= timeout) continue;
      if (w.state === 'active') {
        this.setState(w, 'failed', `no heartbeat for ${formatSeconds(silent)}`);
        failed.push({ workerId: w.workerId, from: 'active', silentMs: silent });
        activeChanged = true;
      } else if (w.state === 'syncing') {
        this.setState(w, 'failed', `no heartbeat within ${formatSeconds(silent)} of joining`);
        failed.push({ workerId: w.workerId, from: 'syncing', silentMs: silent });
      } else if (w.state === 'draining') {
        this.setState(w, 'left', `drain finished: no heartbeat for ${formatSeconds(silent)}`);
      }
    }
    if (failed.length > 0) this.reconfigPending = true;
    if (activeChanged) this.bumpGeneration();
    return failed;
  }

  /** Records a heartbeat; false for an unknown worker (a no-op, as in the seed). */
  updateHeartbeat(workerId: number): boolean {
    const w = this.byId.get(workerId);
    if (!w) return false;
    w.lastHeartbeat = this.clock.monotonic();
    return true;
  }

  activeCount(): number {
    let n = 0;
    for (const w of this.list) if (w.state === 'active') n++;
    return n;
  }

  /** Below min_workers the run pauses instead of failing. */
  shouldPause(): boolean {
    return this.activeCount() < this.limits.minWorkers;
  }

  needsReconfig(): boolean {
    return this.reconfigPending;
  }

  clearReconfig(): void {
    this.reconfigPending = false;
  }

  /** Active worker ids in join order (the order shards and node ranks follow). */
  activeWorkerIds(): number[] {
    return this.list
      .filter((w) => w.state === 'active')
      .sort((a, b) => a.joinSeq - b.joinSeq)
      .map((w) => w.workerId);
  }

  /** Every worker ever seen, in id order (for status display). */
  allWorkers(): readonly PoolWorker[] {
    return this.list;
  }

  worker(workerId: number): PoolWorker | undefined {
    return this.byId.get(workerId);
  }

  setStep(step: number): void {
    this.currentStep = step;
  }

  get step(): number {
    return this.currentStep;
  }

  /** World size in nodes: active workers only (syncing and draining ones do not train). */
  effectiveWorldSize(): number {
    return this.activeCount();
  }

  computeShards(totalSamples: number): ShardAssignment[] {
    return assignShards(totalSamples, this.activeWorkerIds());
  }

  private bumpGeneration(): void {
    this.gen += 1;
  }

  private setState(w: PoolWorker, to: WorkerState, cause: string, from: WorkerState = w.state, rejoined = false): void {
    w.state = to;
    w.stateCause = cause;
    this.emit(w, from, cause, rejoined);
  }

  private emit(w: PoolWorker, from: WorkerState | null, cause: string, rejoined: boolean): void {
    this.onTransition?.({ workerId: w.workerId, nodeId: w.nodeId, incarnation: w.incarnation, from, to: w.state, cause, rejoined });
  }
}
