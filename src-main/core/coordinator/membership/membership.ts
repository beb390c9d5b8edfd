/**
 * Membership, cluster-wide: which machines are in the cluster and in which state, one record each
 * (member-record.ts). Joining never depends on a run: the only bound is the cluster's own (`serve
 * --max-workers`, 10,000 by default), so a stranger holding the join token cannot grow the coordinator without
 * end, and a machine that only wants adapter jobs joins while runs of any size are live. The heartbeat timeout is
 * the cluster's too (`serve --heartbeat-timeout`), the same for every machine whatever it serves.
 *
 * Entrenar's semantics (seed 001), incarnations, a human cause on every transition. Pure: an injected Clock, no I/O.
 *
 *   syncing ──first heartbeat──▶ active ──drain──▶ draining ──exit/leave──▶ left
 *                                  │
 *                                  └──no heartbeat for > timeout──▶ failed ──join again──▶ syncing (incarnation+1)
 */
import type { WorkerSnapshot, WorkerState } from '../../../../src-shared/training';
import type { Instruction } from '../../../../src-shared/worker-protocol';
import { ACTIVATED_CAUSE } from '../../../../src-shared/nodes/worker-cause';
import type { Clock } from '../../../platform/ports';
import { ApiProblem } from '../common';
import { formatSeconds, LIVE_STATES, MemberRecord, PRESENCE_ALONE_FACTOR, type JoinFields, type PoolTransition } from './member-record';

/** The cluster's bound on machines joined at once, unless `serve --max-workers` says otherwise. */
export const DEFAULT_MAX_MACHINES = 10_000;
/** Failed or left machines remembered for the Workers view; older ones are forgotten (their names stay bound). */
export const MAX_GONE_WORKERS = 100;

export type PoolJoinResult = { ok: true; workerId: number; incarnation: number } | { ok: false; reason: string };

export interface MembershipOptions {
  clock: Clock;
  /** Silence after which a machine is declared failed: the cluster's, not any run's. */
  heartbeatTimeoutMs: number;
  /** Machines joined at once (syncing, active or draining); a join beyond it is refused. */
  maxMachines?: number;
  onTransition?: (transition: PoolTransition) => void;
  /** Told the machine's id whenever an instruction is queued in its mailbox (the HTTP layer pokes it to poll). */
  onQueued?: (workerId: number) => void;
}

/** A machine remembered from before a coordinator restart, as the state database kept it. */
export type RestoredMember = Pick<WorkerSnapshot, 'id' | 'node' | 'gpus' | 'address' | 'local' | 'lastHeartbeatAt' | 'incarnation' | 'joinedAt'> & {
  state: WorkerState;
  stateCause: string;
};

export class Membership {
  readonly heartbeatTimeoutMs: number;
  readonly maxMachines: number;
  private readonly clock: Clock;
  private readonly onTransition: ((t: PoolTransition) => void) | undefined;
  private readonly onQueued: (workerId: number) => void;
  private readonly list: MemberRecord[] = [];
  private readonly byId = new Map<number, MemberRecord>();
  private readonly byNode = new Map<string, number>();
  private nextWorkerId = 0;
  private nextJoinSeq = 0;

  constructor(opts: MembershipOptions) {
    this.clock = opts.clock;
    this.heartbeatTimeoutMs = opts.heartbeatTimeoutMs;
    this.maxMachines = opts.maxMachines ?? DEFAULT_MAX_MACHINES;
    this.onTransition = opts.onTransition;
    this.onQueued = opts.onQueued ?? (() => {});
  }

  /** The reason a join would be refused now, or null when there is room. Runs play no part in it. */
  fullReason(): string | null {
    const joined = this.liveCount();
    if (joined < this.maxMachines) return null;
    return `the cluster is full: ${joined} of ${this.maxMachines} machines joined (start the coordinator with gpu-share serve --max-workers N to allow more)`;
  }

  /** A new machine joins: it gets the next id and starts syncing. Refused (with the reason) when the cluster is full. */
  add(fields: JoinFields): PoolJoinResult {
    const full = this.fullReason();
    if (full) return { ok: false, reason: full };
    if (this.byNode.has(fields.node)) return { ok: false, reason: `${fields.node} is already known as worker ${this.byNode.get(fields.node)!}` };
    const id = this.nextWorkerId++;
    const rec = new MemberRecord(id, fields, this.stamp(), () => this.onQueued(id));
    this.insert(rec);
    this.emit(rec, null, 'joined', false);
    return { ok: true, workerId: rec.id, incarnation: rec.incarnation };
  }

  /**
   * A machine known before the coordinator restarted, put back as it was remembered. No transition is
   * reported: nothing happened to it now. Later ids continue after it.
   */
  restore(w: RestoredMember): MemberRecord {
    const known = this.byId.get(w.id);
    if (known) return known;
    const fields: JoinFields = {
      node: w.node,
      gpus: w.gpus.map((g) => ({ ...g })),
      cpuCores: 0,
      ramMb: 0,
      address: w.address,
      coordinatorAddr: null,
      sameMachine: false,
      advertiseHost: w.address ?? '',
      rdzvPort: 0,
      hasTorch: false,
      local: w.local,
      lastHeartbeatAt: w.lastHeartbeatAt,
      lastBatchSeq: 0,
      outputState: {},
    };
    const rec = new MemberRecord(w.id, fields, { ...this.stamp(), now: w.joinedAt }, () => this.onQueued(w.id));
    rec.state = w.state;
    rec.stateCause = w.stateCause;
    rec.incarnation = w.incarnation;
    this.insert(rec);
    this.nextWorkerId = Math.max(this.nextWorkerId, w.id + 1);
    return rec;
  }

  /**
   * A machine that failed or left joins again: same id (one row per machine in the UI), next incarnation,
   * back to syncing at the end of the join order. Anything its old incarnation still sends is stale.
   */
  rejoinWorker(workerId: number, fields: JoinFields, cause = 'joined again'): PoolJoinResult {
    const w = this.byId.get(workerId);
    if (!w) return { ok: false, reason: `no worker ${workerId}` };
    if (LIVE_STATES.has(w.state)) return { ok: false, reason: `worker ${workerId} (${w.node}) is still ${w.state}` };
    const full = this.fullReason();
    if (full) return { ok: false, reason: full };
    const from = w.state;
    w.takeJoin(fields);
    w.incarnation += 1;
    const at = this.stamp();
    w.joinedAt = at.now;
    w.lastHeartbeat = at.monotonic;
    w.lastPresence = null;
    w.joinSeq = at.joinSeq;
    this.setState(w, 'syncing', cause, from, true);
    return { ok: true, workerId: w.id, incarnation: w.incarnation };
  }

  /** Syncing → active (the machine's first heartbeat: hardware detected, ready to work). */
  activateWorker(workerId: number, cause = ACTIVATED_CAUSE): boolean {
    const w = this.byId.get(workerId);
    if (!w || w.state !== 'syncing') return false;
    this.setState(w, 'active', cause);
    return true;
  }

  /** Active → draining: it finishes what it does and stops; it no longer counts as active. */
  removeWorker(workerId: number, cause = 'drained by user'): boolean {
    const w = this.byId.get(workerId);
    if (!w || w.state !== 'active') return false;
    this.setState(w, 'draining', cause);
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
    this.setState(w, 'left', cause);
    return true;
  }

  /** Any live state → failed, for causes other than silence (its agent restarted under it, say). */
  failWorker(workerId: number, cause: string): boolean {
    const w = this.byId.get(workerId);
    if (!w || !LIVE_STATES.has(w.state)) return false;
    this.setState(w, 'failed', cause);
    return true;
  }

  /** Drops a failed or left machine altogether (bounded memory); false for any other state. */
  forget(workerId: number): boolean {
    const w = this.byId.get(workerId);
    if (!w || (w.state !== 'failed' && w.state !== 'left')) return false;
    this.byId.delete(workerId);
    if (this.byNode.get(w.node) === workerId) this.byNode.delete(w.node);
    const i = this.list.indexOf(w);
    if (i !== -1) this.list.splice(i, 1);
    return true;
  }

  /**
   * Declares silent machines gone. Strictly more than the timeout without a heartbeat (the seed's rule) or a
   * presence ping — and, pings or not, more than PRESENCE_ALONE_FACTOR timeouts without a heartbeat:
   * active or syncing → failed (returned); draining → left, since it was leaving anyway.
   */
  checkHeartbeats(): number[] {
    return this.expireSilent().map((f) => f.workerId);
  }

  /** checkHeartbeats() with what each failed machine was before and how long it had been silent. */
  expireSilent(): { workerId: number; from: WorkerState; silentMs: number }[] {
    const now = this.clock.monotonic();
    const failed: { workerId: number; from: WorkerState; silentMs: number }[] = [];
    for (const w of this.list) {
      const heard = now - Math.max(w.lastHeartbeat, w.lastPresence ?? -Infinity);
      const sinceBeat = now - w.lastHeartbeat;
      const pingsOnly = heard <= this.heartbeatTimeoutMs;
      if (pingsOnly && sinceBeat <= this.heartbeatTimeoutMs * PRESENCE_ALONE_FACTOR) continue;
      const silentMs = pingsOnly ? sinceBeat : heard;
      const alone = pingsOnly ? ' (only its presence link answered)' : '';
      if (w.state === 'active') {
        this.setState(w, 'failed', `no heartbeat for ${formatSeconds(silentMs)}${alone}`);
        failed.push({ workerId: w.id, from: 'active', silentMs });
      } else if (w.state === 'syncing') {
        this.setState(w, 'failed', `no heartbeat within ${formatSeconds(silentMs)} of joining${alone}`);
        failed.push({ workerId: w.id, from: 'syncing', silentMs });
      } else if (w.state === 'draining') {
        this.setState(w, 'left', `drain finished: no heartbeat for ${formatSeconds(silentMs)}${alone}`);
      }
    }
    return failed;
  }

  /** Queues an instruction for a live machine (its agent gets it with its next heartbeat answer); false when it is not live. */
  queue(workerId: number, instruction: Instruction): boolean {
    const rec = this.byId.get(workerId);
    if (!rec || !LIVE_STATES.has(rec.state)) return false;
    rec.mailbox.queue(instruction);
    return true;
  }

  /** Whether `incarnation` is the machine's current one and it is live: what a presence connection may speak for. */
  isCurrent(workerId: number, incarnation: number): boolean {
    const rec = this.byId.get(workerId);
    return rec !== undefined && rec.incarnation === incarnation && LIVE_STATES.has(rec.state);
  }

  /** The live machine a presence connection speaks for; 409 when it is not live (it must join again). */
  requireLive(workerId: number): MemberRecord {
    const rec = this.require(workerId);
    if (!LIVE_STATES.has(rec.state)) throw new ApiProblem(409, `worker ${workerId} (${rec.node}) is ${rec.state}; join again`);
    return rec;
  }

  /**
   * The agent said goodbye: nothing more is sent to it, its later heartbeats are refused until it joins again, and
   * a live machine has left (a draining one has finished). Returns the record when it left now, null when it had.
   */
  goodbye(workerId: number, incarnation: number, reason: string): MemberRecord | null {
    const rec = this.require(workerId);
    this.checkIncarnation(rec, incarnation, 'leave');
    rec.leaveReceived = true;
    rec.mailbox.clear();
    if (rec.state === 'left') return null;
    if (rec.state === 'draining') this.finalizeRemoval(workerId, `drain finished: ${reason}`);
    else this.leaveWorker(workerId, reason === 'left' ? 'left' : `left: ${reason}`);
    return rec;
  }

  /** A person drains an active machine: it is told to finish and stop. True when it started draining now; 409 unless active. */
  drain(workerId: number, cause: string): boolean {
    const rec = this.require(workerId);
    if (rec.state === 'draining') return false;
    if (rec.state !== 'active') throw new ApiProblem(409, `worker ${workerId} (${rec.node}) is ${rec.state}; only an active worker can be drained`);
    this.removeWorker(workerId, cause);
    rec.mailbox.queue({ kind: 'drain', reason: cause });
    return true;
  }

  /** A presence ping under `incarnation`: alive, though its heartbeats may be stuck; false for a stale one. */
  heardPresence(workerId: number, incarnation: number): boolean {
    if (!this.isCurrent(workerId, incarnation)) return false;
    this.byId.get(workerId)!.lastPresence = this.clock.monotonic();
    return true;
  }

  /** Records a heartbeat; false for an unknown machine (a no-op, as in the seed). */
  updateHeartbeat(workerId: number): boolean {
    const w = this.byId.get(workerId);
    if (!w) return false;
    w.lastHeartbeat = this.clock.monotonic();
    w.lastHeartbeatAt = this.clock.now();
    return true;
  }

  activeCount(): number {
    let n = 0;
    for (const w of this.list) if (w.state === 'active') n++;
    return n;
  }

  /** Machines joined now: syncing, active or draining (what the cluster's bound counts). */
  liveCount(): number {
    let n = 0;
    for (const w of this.list) if (LIVE_STATES.has(w.state)) n++;
    return n;
  }

  /** Active machine ids in join order (the order run members and node ranks follow). */
  activeWorkerIds(): number[] {
    return this.list
      .filter((w) => w.state === 'active')
      .sort((a, b) => a.joinSeq - b.joinSeq)
      .map((w) => w.id);
  }

  /** Every machine remembered, in the order first seen (for status display). */
  allWorkers(): readonly MemberRecord[] {
    return this.list;
  }

  worker(workerId: number): MemberRecord | undefined {
    return this.byId.get(workerId);
  }

  idForNode(node: string): number | undefined {
    return this.byNode.get(node);
  }

  hasNode(node: string): boolean {
    return this.byNode.has(node);
  }

  /** The machine's record, or 404 with what to do. */
  require(workerId: number): MemberRecord {
    const rec = this.byId.get(workerId);
    if (!rec) {
      throw new ApiProblem(404, `no worker ${workerId} here: it never joined this coordinator, or the coordinator restarted since; join again`);
    }
    return rec;
  }

  /** Throws 409 unless `incarnation` is the machine's current one and it was not declared failed. */
  checkIncarnation(rec: MemberRecord, incarnation: number, what: string): void {
    if (incarnation !== rec.incarnation) {
      throw new ApiProblem(
        409,
        `stale ${what}: worker ${rec.id} (${rec.node}) is at incarnation ${rec.incarnation}, this came from incarnation ${incarnation}; stop its training and join again`,
      );
    }
    if (rec.state === 'failed') {
      throw new ApiProblem(409, `stale ${what}: worker ${rec.id} (${rec.node}) was declared failed (${rec.stateCause}); stop its training and join again`);
    }
  }

  /** The machine's record when it may still speak; null when it drained and is only winding down (answered, ignored). */
  liveRecord(workerId: number, incarnation: number, what: string): MemberRecord | null {
    const rec = this.require(workerId);
    this.checkIncarnation(rec, incarnation, what);
    if (rec.state === 'left') {
      if (rec.leaveReceived) throw new ApiProblem(409, `worker ${workerId} (${rec.node}) has left (${rec.stateCause}); join again to take part`);
      // Drained: its training stopped and its goodbye is on the way. Answer without instructions.
      return what === 'report' ? rec : null;
    }
    return rec;
  }

  /**
   * Forgets the oldest failed or left machines beyond MAX_GONE_WORKERS (21,000 random joins once grew the
   * coordinator by 60 MB and its state reply to 6.5 MB), except those in `keep` (members a run still names).
   * Their names stay bound to their machines (the gate keeps the bindings). Returns the forgotten ids.
   */
  pruneGone(keep: ReadonlySet<number>): number[] {
    const gone = this.list.filter((w) => w.state === 'failed' || w.state === 'left');
    if (gone.length <= MAX_GONE_WORKERS) return [];
    const forgotten: number[] = [];
    for (const w of gone.slice(0, gone.length - MAX_GONE_WORKERS)) {
      if (keep.has(w.id)) continue;
      this.forget(w.id);
      forgotten.push(w.id);
    }
    return forgotten;
  }

  snapshot(workerId: number): WorkerSnapshot | null {
    return this.byId.get(workerId)?.snapshot() ?? null;
  }

  snapshots(): WorkerSnapshot[] {
    return this.list.map((w) => w.snapshot());
  }

  private stamp(): { now: number; monotonic: number; joinSeq: number } {
    return { now: this.clock.now(), monotonic: this.clock.monotonic(), joinSeq: this.nextJoinSeq++ };
  }

  private insert(rec: MemberRecord): void {
    this.list.push(rec);
    this.byId.set(rec.id, rec);
    this.byNode.set(rec.node, rec.id);
  }

  private setState(w: MemberRecord, to: WorkerState, cause: string, from: WorkerState = w.state, rejoined = false): void {
    w.state = to;
    w.stateCause = cause;
    this.emit(w, from, cause, rejoined);
  }

  private emit(w: MemberRecord, from: WorkerState | null, cause: string, rejoined: boolean): void {
    this.onTransition?.({ workerId: w.id, nodeId: w.node, incarnation: w.incarnation, from, to: w.state, cause, rejoined });
  }
}
