/**
 * The coordinator's facade, composing its parts: who is in the cluster (membership/, one record per machine,
 * `pool` in the run code), which runs train on whom (runs/: several runs, each its own group, planned by
 * src-shared/scheduling), the links between machines (links/), what survives a restart
 * (membership/failover-grace.ts), the change feed and what people are told (common/). Agents talk to it through the HTTP API
 * (core/api/coordinator-http.ts) and poll: instructions travel in heartbeat answers; nothing connects to a worker.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { CoordinatorEvent, CoordinatorEventKind, EventSeverity, RunArtifact, RunProject, RunSnapshot, RunSpec, WorkerSnapshot } from '../../../../src-shared/training';
import type { HeartbeatRequest, HeartbeatResponse, JoinRequest, JoinResponse, ReportRequest, leaveRequestSchema } from '../../../../src-shared/worker-protocol';
import type { Clock } from '../../../platform/ports';
import { ApiProblem, capitalize, ChangeFeed, type CoordinatorChange, type CoordinatorJobHooks, type CoordinatorStore, type EventContext, type Instruction, type RestoredState, UserMessages } from '../common';
import { claimMismatch, OutputBudget, RunController, RunSeriesBook, TrainerStepMemory } from '../runs';
import { connectionFacts, type ConnectionFacts, DEFAULT_FAILOVER_GRACE_MS, DEFAULT_MAX_MACHINES, FailoverGrace, forgetNode, decideJoin, type JoinDecision, type JoinFields, joinFields, LIVE_STATES, Membership, NodeKeys, type PoolTransition, recordSessions, transitionEvent, WorkerGate } from '../membership';
import { linkSurveyFor, type LinkSurvey } from '../links';
import type { CoordinatorServiceOptions } from './coordinator-service-options';

export { ApiProblem, type CoordinatorChange, isApiProblem } from '../common';
export { START_TIMEOUT_MS } from '../runs';

export type LeaveRequest = z.input<typeof leaveRequestSchema>;
export type { CoordinatorServiceOptions } from './coordinator-service-options';

/** How often start() runs tick(): failure detection is at most this late. */
export const TICK_MS = 200;

export class CoordinatorService {
  private readonly clock: Clock;
  private readonly heartbeatIntervalMs: number;
  private readonly pool: Membership;
  private readonly feed: ChangeFeed;
  private readonly series = new RunSeriesBook({ monotonic: () => this.clock.monotonic() }); // samples/s and resources over each run, subscribed below
  private readonly messages: UserMessages;
  /** Read-only use outside (core/projects looks runs up by id); changes go through the service's methods. */
  readonly runsCtl: RunController;
  private readonly gate: WorkerGate;
  private readonly outputBudget: OutputBudget;
  private readonly grace: FailoverGrace;
  readonly linkSurvey: LinkSurvey; // the measured links between workers (link-survey.ts, link-book.ts)
  /** Random, new at each start, kept in the state database: agents tell a restarted coordinator by it (failover-grace.ts). */
  readonly epoch = randomBytes(12).toString('base64url');
  private timer: { cancel(): void } | null = null;
  private instructionListener: ((workerId: number) => void) | null = null;
  private store: CoordinatorStore | null = null;
  private jobHooks: CoordinatorJobHooks | null = null;
  /** Each node's pinned key: the HTTP layer checks signatures with it, snapshots show its fingerprint (node-keys.ts). */
  readonly nodeKeys = new NodeKeys({ now: () => Date.now(), onKeyConflict: (message) => this.messages.event('key-conflict', 'warning', message) }); // wall time: signatures come from other machines' clocks

  constructor(opts: CoordinatorServiceOptions) {
    this.clock = opts.clock;
    this.heartbeatIntervalMs = opts.heartbeatIntervalMs ?? 1000;
    const defaultTimeoutMs = opts.heartbeatTimeoutMs ?? 5000;
    const defaultMaxWorkers = opts.maxWorkers ?? DEFAULT_MAX_MACHINES;
    const trustAdvertised = opts.trustAdvertisedHosts ?? false;
    this.feed = new ChangeFeed(this.clock);
    this.feed.subscribe((change) => this.series.take(change));
    this.messages = new UserMessages(this.clock, this.feed, (id) => this.pool.worker(id)?.node);
    this.pool = new Membership({
      clock: this.clock,
      maxMachines: defaultMaxWorkers,
      heartbeatTimeoutMs: defaultTimeoutMs,
      onTransition: (t) => this.onTransition(t),
      onQueued: (id) => this.instructionListener?.(id),
    });
    this.gate = new WorkerGate({
      trustAdvertisedHosts: trustAdvertised,
      nameInUse: (node) => this.pool.hasNode(node),
      sessions: recordSessions((id) => this.pool.worker(id)),
    });
    this.outputBudget = new OutputBudget(this.clock, opts.outputBudget);
    this.grace = new FailoverGrace(this.clock, this.pool, opts.failoverGraceMs ?? DEFAULT_FAILOVER_GRACE_MS);
    this.nodeKeys.onChange(() => this.feed.workersChanged('state'));
    this.nodeKeys.onRevoke((node) => this.expelNode(node));
    this.runsCtl = new RunController({
      clock: this.clock,
      pool: this.pool,
      messages: this.messages,
      feed: this.feed,
      heartbeatIntervalMs: this.heartbeatIntervalMs,
      heartbeatTimeoutMs: () => this.pool.heartbeatTimeoutMs,
      capacity: () => this.jobHooks?.capacity?.() ?? null,
      rdzvHostOverride: opts.rdzvHostOverride,
      trustAdvertised,
      links: () => this.linkSurvey.links(),
      stepMemory: new TrainerStepMemory(),
      surveyLinks: { remeasure: (ids, maxAgeMs) => this.linkSurvey.remeasure(ids, maxAgeMs), training: (a, b, mbps) => this.linkSurvey.training(a, b, mbps) },
    });
    this.linkSurvey = linkSurveyFor({ clock: this.clock, pool: this.pool, trustAdvertised, refreshMs: opts.linkRefreshMs, runMembers: () => this.runsCtl.memberIds(), jobs: () => this.jobHooks?.capacity?.().holdings, changed: () => this.feed.workersChanged('state') });
  }

  // ---------------------------------------------------------------------------------------------------------
  // Keeping state across restarts

  /**
   * Puts back what the state database kept: events, runs (the live one waits for its workers), and every
   * known worker — not live: its session died with the old process, so its next request is refused (401) and
   * its agent joins again, keeping its id and its name. Call before start(), after attachStore() (so what it
   * says and changes is kept).
   */
  restore(state: RestoredState): void {
    this.messages.restore(state.events, state.lastEventSeq);
    this.series.restore(state.series);
    for (const n of state.names ?? []) this.gate.restoreBinding(n.node, n.machineHash, n.firstFrom);
    const graced: { workerId: number; incarnation: number }[] = [];
    for (const w of state.workers) {
      const wasLive = LIVE_STATES.has(w.state);
      // Within the failover grace a machine that was live stays live, unattached, until it re-attaches (failover-grace.ts).
      const keep = wasLive && this.grace.graceMs > 0;
      if (keep) graced.push({ workerId: w.id, incarnation: w.incarnation });
      const stateCause = keep ? this.grace.waitingCause() : wasLive ? 'the coordinator restarted; waiting for it to join again' : w.stateCause;
      this.pool.restore({ ...w, state: wasLive && !keep ? 'failed' : w.state, stateCause });
      this.gate.restoreBinding(w.node, w.machineHash, w.address);
      if (wasLive) this.saveWorker(w.id);
    }
    this.grace.begin(state.epoch ?? null, graced);
    this.runsCtl.restore(state.runs, state.runSeq, { workers: new Set(graced.map((g) => g.workerId)), ms: this.grace.graceMs });
  }

  /** From now on, everything worth keeping is handed to `store` as it happens. */
  attachStore(store: CoordinatorStore): void {
    this.store = store;
    this.runsCtl.attachStore(store);
    this.series.attachStore(store);
    store.saveEpoch?.(this.epoch);
    this.messages.onEvent((event) => store.saveEvent(event));
    for (const w of this.pool.allWorkers()) this.saveWorker(w.workerId);
    for (const run of this.runsCtl.runs()) store.saveRun(run);
  }

  // ---------------------------------------------------------------------------------------------------------
  // Worker endpoints

  /**
   * Admits a worker. `from` is where its connection came from (a bare address stands for a peer whose
   * coordinator-side address is unknown). Refused: claims the connection does not show, and a name that
   * belongs to another machine (worker-gate.ts).
   */
  join(req: JoinRequest, from: ConnectionFacts | string | null): JoinResponse & { sessionSecret: string } {
    const conn = typeof from === 'object' && from !== null ? from : connectionFacts(from, null);
    this.gate.admit({ node: req.node, machineId: req.machineId, advertiseHost: req.advertiseHost, local: req.local ?? false }, conn);
    const existingId = this.pool.idForNode(req.node);
    const fields = joinFields(req, conn, this.clock);

    const waited = existingId !== undefined && this.grace.isWaiting(existingId);
    const claim = existingId === undefined ? null : this.grace.reattach(existingId, req.reattach, (id, runs) => claimMismatch(this.runsCtl, id, runs));
    const earlier = existingId === undefined || claim === null ? null : { state: this.pool.require(existingId).state, waitedInGrace: waited, verdict: claim };
    const { workerId, incarnation } = this.applyJoin(decideJoin(req.node, earlier), existingId, fields, conn);
    if (!req.python) {
      this.messages.event('worker-joined', 'warning', `Worker ${req.node} has no Python with torch: it can take part in runs with the direct launcher only`, { workerId });
    }
    this.feed.workersChanged('state');
    this.outputBudget.forget(workerId);
    this.saveWorker(workerId);
    this.pruneGoneWorkers();
    return {
      workerId,
      incarnation,
      heartbeatIntervalMs: this.heartbeatIntervalMs,
      heartbeatTimeoutMs: this.pool.heartbeatTimeoutMs,
      sessionSecret: this.gate.openSession(workerId),
      epoch: this.epoch,
      failoverGraceMs: this.grace.graceMs,
      ...FailoverGrace.answer(Boolean(req.reattach), claim),
    };
  }

  /** Carries out a join's decision (membership/join-decision.ts): the record it takes, and the events it tells. */
  private applyJoin(decision: JoinDecision, existingId: number | undefined, fields: JoinFields, conn: ConnectionFacts): { workerId: number; incarnation: number } {
    if (decision.kind === 'add') {
      const r = this.pool.add(fields);
      if (!r.ok) throw new ApiProblem(409, `${fields.node} cannot join: ${r.reason}`);
      const address = conn.seenFrom;
      this.messages.event('worker-joined', 'info', `Worker ${fields.node} joined${address ? ` from ${address}` : ''}: ${this.pool.require(r.workerId).describeHardware()}`, { workerId: r.workerId });
      return r;
    }
    const id = existingId!;
    if (decision.kind === 'take-back') {
      const back = this.grace.takeBack(id, fields, this.runsCtl.memberRuns(id));
      this.messages.event('worker-rejoined', 'info', back.message, { workerId: id });
      return { workerId: id, incarnation: back.incarnation };
    }
    const pw = this.pool.require(id);
    const replaced = decision.replaces;
    if (replaced) {
      this.pool.failWorker(id, replaced.cause);
      if (replaced.charge === 'shrink') this.runsCtl.memberGone(id, `worker ${fields.node} came back after the coordinator restarted without its training`);
      else this.runsCtl.afterFailures([id], new Map(replaced.wasActive ? [[id, 'Its agent restarted and joined again']] : []));
    }
    const before = pw.stateCause;
    const r = this.pool.rejoinWorker(id, fields, `joined again as incarnation ${pw.incarnation + 1}`);
    if (!r.ok) throw new ApiProblem(409, `${fields.node} cannot join: ${r.reason}`);
    this.messages.event('worker-rejoined', 'info', `Worker ${fields.node} joined again as incarnation ${r.incarnation} (before: ${before})`, { workerId: r.workerId });
    return r;
  }

  /** Told the worker id whenever an instruction is queued for it (the HTTP layer pokes the agent to poll now). */
  setInstructionListener(listener: ((workerId: number) => void) | null): void { this.instructionListener = listener; }

  /** Adapter jobs (core/jobs) hear about job beats through these hooks. */
  setJobHooks(hooks: CoordinatorJobHooks | null): void { this.jobHooks = hooks; }

  /** Queues an instruction for a live worker (a job to run or stop) and pokes it; false when the worker is not live. */
  queueInstruction(workerId: number, instruction: Instruction): boolean { return this.pool.queue(workerId, instruction); }

  /** Throws 401/404 unless `secret` is the worker's current session secret (every worker request after the join). */
  authenticate(workerId: number, secret: string | null): void {
    const rec = this.pool.require(workerId);
    this.gate.checkSession(workerId, secret, rec.node);
  }

  /** A presence connection opened for the worker's current session: which incarnation it speaks for. */
  presenceOpened(workerId: number, secret: string | null): { incarnation: number; node: string } {
    this.authenticate(workerId, secret);
    const rec = this.pool.requireLive(workerId);
    return { incarnation: rec.incarnation, node: rec.node };
  }

  /** A ping on its presence connection: proof of life while its heartbeats may be stuck (membership.ts bounds it). */
  presenceAlive(workerId: number, incarnation: number): void {
    this.pool.heardPresence(workerId, incarnation);
  }

  /** The agent said goodbye on its presence connection (its deathrattle): a leave, at once. */
  presenceBye(workerId: number, incarnation: number, reason: string): void {
    if (!this.pool.isCurrent(workerId, incarnation)) return;
    this.leave(workerId, { incarnation, reason: reason.trim().slice(0, 200) || 'left' });
  }

  /**
   * The agent's presence connection ended by an orderly close from its machine without a goodbye: its kernel
   * closed the socket because the process is gone. Failed now, instead of at the heartbeat timeout.
   */
  presenceLost(workerId: number, incarnation: number, why = { cause: 'its agent process ended (connection closed without a goodbye)', run: 'Its agent process ended' }): void {
    if (!this.pool.isCurrent(workerId, incarnation)) return;
    const wasActive = this.pool.require(workerId).state === 'active';
    this.pool.failWorker(workerId, why.cause);
    this.runsCtl.afterFailures([workerId], new Map(wasActive ? [[workerId, why.run]] : []));
  }

  /** Its approval was revoked (node-keys.ts): the session ends, it leaves the runs, its next join awaits approval. */
  private expelNode(node: string): void {
    const id = this.pool.idForNode(node);
    if (id !== undefined) this.gate.closeSession(id);
    if (id !== undefined) this.presenceLost(id, this.pool.worker(id)?.incarnation ?? -1, { cause: 'its approval was revoked', run: 'Its approval was revoked' });
  }

  heartbeat(workerId: number, req: HeartbeatRequest): HeartbeatResponse {
    const rec = this.pool.liveRecord(workerId, req.incarnation, 'heartbeat');
    const heartbeatTimeoutMs = this.pool.heartbeatTimeoutMs;
    if (!rec) return { instructions: [], heartbeatTimeoutMs };
    this.pool.updateHeartbeat(workerId);
    this.store?.workerSeen(workerId, rec.lastHeartbeatAt);
    if (rec.state === 'syncing' && this.pool.activateWorker(workerId)) this.runsCtl.scheduleReconcile();
    if (req.progress) rec.progress = req.progress;
    // Each run's progress: a machine training several runs (one per GPU set) sends `runs`, `progress` being one of them.
    for (const p of [...(req.progress ? [req.progress] : []), ...(req.runs ?? []).filter((r) => r.runId !== req.progress?.runId)]) this.runsCtl.recordProgress(rec, p);
    rec.takeBeat(req); // its resources and the snapshots its cache holds
    this.runsCtl.provedAlive(workerId);
    this.feed.workersChanged('beat');
    if (req.jobs || req.gpuFree) this.jobHooks?.beats(workerId, rec.node, req);
    const out = rec.mailbox.handOut(req.ack);
    this.runsCtl.noteStartsHandedOut(rec, out.instructions);
    // The cluster's timeout travels with every reply, so agents give up on a lost coordinator on the same clock.
    return { ...out, heartbeatTimeoutMs };
  }

  report(workerId: number, req: ReportRequest): void {
    const rec = this.pool.liveRecord(workerId, req.incarnation, 'report');
    if (!rec) return;
    const seq = req.batchSeq;
    // A numbered batch already taken is a repeat whose answer the agent lost: answer it, apply nothing.
    if (seq === undefined || seq > rec.lastBatchSeq) {
      for (const r of req.reports) if (r.type === 'links') this.linkSurvey.onReport(workerId, r); else this.runsCtl.handleReport(this.outputBudget, rec, r);
      if (seq !== undefined) rec.lastBatchSeq = seq;
    }
    // A report proves its sender alive just as a heartbeat does.
    this.runsCtl.provedAlive(workerId);
  }

  leave(workerId: number, req: LeaveRequest): void {
    const rec = this.pool.goodbye(workerId, req.incarnation, (req.reason ?? 'left').trim() || 'left');
    if (!rec) return;
    this.feed.workersChanged('state');
    this.runsCtl.memberGone(workerId, `worker ${rec.node} left`);
  }

  // ---------------------------------------------------------------------------------------------------------
  // Operator actions

  /** An older client's spec may carry its own heartbeat timeout: the cluster's replaces it, so the run shows what applies. */
  deleteRun(runId: string): { deleted: string } { return this.runsCtl.deleteRun(runId); }
  startRun(spec: RunSpec, project?: RunProject): RunSnapshot { return this.runsCtl.startRun({ ...spec, heartbeatTimeoutMs: this.pool.heartbeatTimeoutMs }, project); }
  setRunArtifact(runId: string, artifact: RunArtifact): RunSnapshot { return this.runsCtl.setArtifact(runId, artifact); }
  attachProjectFiles(files: Parameters<RunController['attachProjectFiles']>[0]): void { this.runsCtl.attachProjectFiles(files); }
  stopRun(runId: string): RunSnapshot { return this.runsCtl.stopRun(runId); }

  drainWorker(workerId: number): WorkerSnapshot[] {
    if (this.pool.drain(workerId, 'drained by user')) {
      this.feed.workersChanged('state');
      this.runsCtl.memberGone(workerId, `worker ${this.pool.require(workerId).node} drained by user`);
    }
    return this.workers();
  }

  // ---------------------------------------------------------------------------------------------------------
  // Snapshots and subscriptions

  workers(): WorkerSnapshot[] { return this.nodeKeys.annotate(this.pool.snapshots()); }
  /** The node name of a known worker (404 otherwise). */
  nodeOf(workerId: number): string { return this.pool.require(workerId).node; }
  /** The worker found a Python with torch at join (torchrun runs need it): the job round reserves for runs by it. */
  hasTorch(workerId: number): boolean { return this.pool.worker(workerId)?.hasTorch ?? false; }

  runs(): RunSnapshot[] { return this.runsCtl.runs(); }
  /** Changes exactly when runs take or free machines (cheap: the job service polls it to place jobs on what a run freed). */
  runMembersKey(): string { return this.runsCtl.membersKey(); }

  events(): CoordinatorEvent[] { return this.messages.events(); }
  /** An event from outside the run code (the job queue, the app's cluster file and SSH starts), kept and sent as any other. */
  recordEvent(kind: CoordinatorEventKind, severity: EventSeverity, message: string, ctx: EventContext = {}): void { this.messages.event(kind, severity, message, ctx); }

  runOutput(runId: string): string { return this.runsCtl.output(runId); } // every line prefixed with its node; '' for an unknown run
  runOutputTimes(runId: string): (number | null)[] { return this.runsCtl.outputTimes(runId); } // when the coordinator received each line
  runSeries(runId: string) { return this.series.series(runId); } // samples/s and resources over the run (run-series-book.ts)

  subscribe(listener: (change: CoordinatorChange) => void): () => void { return this.feed.subscribe(listener); }

  /** Declares silent workers failed, starts settled scale-ups, and sends the coalesced snapshots. */
  tick(): void {
    const unattached = this.grace.tick();
    for (const id of unattached) this.pool.failWorker(id, this.grace.expiredCause());
    if (unattached.length > 0) this.runsCtl.afterFailures(unattached, new Map(unattached.map((id) => [id, capitalize(this.grace.expiredCause())])));
    const failed = this.pool.expireSilent();
    if (failed.length > 0) {
      const causes = new Map<number, string>();
      for (const f of failed) if (f.from === 'active') causes.set(f.workerId, `No heartbeat for ${Math.round(f.silentMs / 1000)} s`);
      this.runsCtl.afterFailures(failed.map((f) => f.workerId), causes);
    }
    this.runsCtl.tick();
    this.linkSurvey.tick();
    this.nodeKeys.expire(); // a held-back key whose process is gone: its warning goes
    this.feed.flush({
      workers: () => this.workers(),
      emitRun: (runId) => {
        if (!this.runsCtl.emitRun(runId)) this.feed.runSent(runId);
      },
    });
  }

  start(): void { this.timer ??= this.clock.setInterval(() => this.tick(), TICK_MS); }
  /** Stops ticking and writes the series changed since their last save (the app stops it before closing its database). */
  stop(): void { this.timer?.cancel(); this.timer = null; this.series.flush(); }

  private pruneGoneWorkers(): void { this.dropped(this.pool.pruneGone(this.runsCtl.memberIds())); }
  /** Forgets every offline record of `node`, refused while online or training; its key stays pinned (forget-node.ts). */
  forgetNode(node: string): WorkerSnapshot[] { this.dropped(forgetNode({ pool: this.pool, runs: this.runsCtl, messages: this.messages }, node)); return this.workers(); }
  /** Their sessions and state.db rows go with their records (so they stay gone after a restart). */
  private dropped(ids: number[]): void {
    ids.forEach((id) => (this.outputBudget.forget(id), this.store?.forgetWorker(id)));
    if (ids.length > 0) this.feed.workersChanged('state');
  }

  private onTransition(t: PoolTransition): void {
    this.linkSurvey.onWorkerState(t.workerId, t.to);
    if (t.from === null || t.rejoined) return; // join() writes these itself, with the hardware
    const said = transitionEvent(t, this.pool.worker(t.workerId)?.node ?? t.nodeId);
    if (said) this.messages.event(said.kind, said.severity, said.message, { workerId: t.workerId });
    this.feed.workersChanged('state');
    this.saveWorker(t.workerId);
  }

  private saveWorker(workerId: number): void {
    if (!this.store) return;
    const snapshot = this.pool.snapshot(workerId);
    const machineHash = snapshot ? this.gate.machineHashOf(snapshot.node) : null;
    if (!snapshot || !machineHash) return;
    const { step: _step, loss: _loss, samplesPerSec: _sps, ...rest } = snapshot;
    this.store.saveWorker({ ...rest, machineHash });
  }
}
