/**
 * The coordinator: who is in the cluster, which of them train the live run, on which shards, in which
 * generation — and what to do when that changes. Worker agents talk to it through the HTTP API
 * (src-main/core/api/coordinator-http.ts); the app core reads snapshots and subscribes to changes.
 *
 * Why generations instead of letting torchrun re-form by itself: torchrun notices a dead node only after its
 * rendezvous timeouts (15–40 s) and then carries on with the shard environment it was started with. We see a
 * failure at the heartbeat timeout (5 s by default), so every change of the membership starts a fresh
 * rendezvous (`<runId>-g<generation>`) with the survivors at once, each with its new shard, and the trainer
 * resumes from its checkpoint. Instructions travel in heartbeat responses (the agents poll; nothing connects
 * to a worker), each delivered once, in order.
 *
 * A worker becomes active on its first heartbeat after joining: by then its agent has detected the hardware
 * and is ready to launch.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { assignShards } from '../../../src-shared/shards';
import type {
  CoordinatorEvent,
  CoordinatorEventKind,
  EventSeverity,
  ResidencyVerdict,
  RunSnapshot,
  RunSpec,
  RunState,
  ShardMap,
  UserNotification,
  WorkerGpu,
  WorkerSnapshot,
} from '../../../src-shared/training';
import type {
  HeartbeatRequest,
  HeartbeatResponse,
  Instruction,
  JoinRequest,
  JoinResponse,
  Progress,
  Report,
  ReportRequest,
  leaveRequestSchema,
} from '../../../src-shared/worker-protocol';
import type { Clock } from '../ports';
import { ApiProblem } from './api-problem';
import { ElasticPool, LIVE_STATES, type PoolTransition } from './elastic-pool';
import { buildLaunchPlan, formatEndpoint } from './launch-plan';
import { LossHistory } from './loss-history';
import { sanitizeNodeName, sanitizeRemoteOutput, type RemoteOutputState } from '../../../src-shared/terminal-text';
import { OutputBudget, type OutputBudgetOptions } from './output-budget';
import { chooseRendezvous } from './rendezvous-address';
import { RunOutputLog } from './run-output-log';
import { connectionFacts, WorkerGate, type ConnectionFacts } from './worker-gate';

export { ApiProblem, isApiProblem } from './api-problem';

export type LeaveRequest = z.input<typeof leaveRequestSchema>;

export type CoordinatorChange =
  | { type: 'workers'; workers: WorkerSnapshot[] }
  | { type: 'run'; run: RunSnapshot }
  | { type: 'output'; runId: string; workerId: number; node: string; data: string }
  | { type: 'event'; event: CoordinatorEvent }
  | { type: 'notification'; notification: UserNotification };

export interface CoordinatorServiceOptions {
  clock: Clock;
  joinToken: string;
  operatorToken: string;
  heartbeatIntervalMs?: number;
  /** Used while no run sets its own. */
  heartbeatTimeoutMs?: number;
  /** Host for --rdzv_endpoint instead of the first worker's advertised host (the port stays the worker's). */
  rdzvHostOverride?: string;
  /** Joins are refused beyond this many active workers while no run sets max_workers (default 10,000). */
  maxWorkers?: number;
  /** Accept advertised hosts other than where workers connect from (NAT); off by default, see worker-gate.ts. */
  trustAdvertisedHosts?: boolean;
  outputBudget?: OutputBudgetOptions;
}

/** How often start() runs tick(): failure detection is at most this late. */
export const TICK_MS = 200;
/**
 * A member whose start was handed out but that reported neither `started` nor `exited` within this long is
 * failed like a silent one: the others wait in the rendezvous for it, so without a bound they would wait forever.
 * Launching (even after stopping the previous generation's process with its grace) takes a few seconds at most.
 */
export const START_TIMEOUT_MS = 30_000;
/** Heartbeat-only snapshot changes are sent at most this often. */
const PROGRESS_EMIT_MS = 1000;
const MAX_EVENTS = 2000;
const MAX_SHARD_HISTORY = 50;
const MAX_RUNS_KEPT = 20;
const MAX_PENDING_INSTRUCTIONS = 64;
/** Failed or left workers remembered for the Workers view; older ones are forgotten (their names stay bound). */
const MAX_GONE_WORKERS = 100;

interface WorkerRecord {
  id: number;
  node: string;
  gpus: WorkerGpu[];
  cpuCores: number;
  ramMb: number;
  address: string | null;
  /** The coordinator's address on this worker's connection, and whether the worker is on this machine. */
  coordinatorAddr: string | null;
  sameMachine: boolean;
  advertiseHost: string;
  rdzvPort: number;
  hasTorch: boolean;
  local: boolean;
  lastHeartbeatAt: number;
  progress: Progress | null;
  /** Instructions not yet acknowledged, oldest first; pending[i] has sequence number pendingBase + i. */
  pending: Instruction[];
  pendingBase: number;
  /** How many of `pending` (a prefix) have been handed out; the rest were never sent and may still be cancelled. */
  pendingSent: number;
  /** The agent said goodbye; its later heartbeats are refused until it joins again. */
  leaveReceived: boolean;
  /** Highest report batchSeq taken from this incarnation (0: none); a batch at or below it is a repeat. */
  lastBatchSeq: number;
  /** Escape-sequence state of this worker's output stream (sequences may span reports). */
  outputState: RemoteOutputState;
}

interface MemberStatus {
  started: boolean;
  pid: number | null;
  exit: { exitCode: number | null; signal: number | null } | null;
  progress: Progress | null;
  /** Monotonic ms at which its start was first handed out in a heartbeat answer; null until then. */
  startSentAt: number | null;
}

type LaunchWhy = 'start' | 'scale' | 'shrink' | 'failure' | 'restart' | 'resume';

/** The coordinator's live record of a run: the public snapshot's fields (loss kept as a history object) plus bookkeeping. */
interface RunRecord extends Omit<RunSnapshot, 'lossHistory' | 'generationMarks' | 'workerRows' | 'workerFailures'> {
  members: Map<number, MemberStatus>;
  /** Members reported progress since run.progress was computed. */
  progressStale: boolean;
  launchedBy: LaunchWhy | null;
  /**
   * A member's process failed and the generation will be relaunched once every other member has proved it is
   * alive (heartbeated since), or has been declared failed: when a rank dies because its peer's machine died,
   * this relaunches once, without the dead machine, instead of twice.
   */
  pendingRestart: { cause: string; since: number; waitingFor: Set<number> } | null;
  loss: LossHistory;
  output: RunOutputLog;
}

const ENDED: ReadonlySet<RunState> = new Set(['finished', 'failed', 'stopped']);

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function describeExitStatus(exitCode: number | null, signal: number | null): string {
  return signal !== null ? `exited with signal ${signal}` : `exited with code ${exitCode ?? 'unknown'}`;
}

function describeExit(node: string, exitCode: number | null, signal: number | null): string {
  return `process on ${node} ${describeExitStatus(exitCode, signal)}`;
}

export class CoordinatorService {
  private readonly clock: Clock;
  private readonly heartbeatIntervalMs: number;
  private readonly defaultTimeoutMs: number;
  private readonly defaultMaxWorkers: number;
  private readonly rdzvHostOverride: string | undefined;
  private readonly pool: ElasticPool;
  private readonly records = new Map<number, WorkerRecord>();
  private readonly byNode = new Map<string, number>();
  private readonly runList: RunRecord[] = [];
  private live: RunRecord | null = null;
  private readonly eventLog: CoordinatorEvent[] = [];
  private readonly listeners = new Set<(change: CoordinatorChange) => void>();
  private eventSeq = 0;
  private notificationSeq = 0;
  private runSeq = 0;
  private timer: { cancel(): void } | null = null;
  /** Monotonic ms at which a settled scale-up is due (joins are batched for one heartbeat interval). */
  private reconcileDueAt: number | null = null;
  /** 'state': a worker changed state (sent at the next tick); 'beat': only heartbeat data (sent at most 1 Hz). */
  private workersDirty: 'none' | 'beat' | 'state' = 'none';
  private lastWorkersEmit = -Infinity;
  /** Runs whose progress changed since they were last sent (sent at most 1 Hz). */
  private readonly dirtyRuns = new Set<RunRecord>();
  private lastProgressEmit = -Infinity;
  private readonly gate: WorkerGate;
  private instructionListener: ((workerId: number) => void) | null = null;
  private readonly trustAdvertised: boolean;
  private readonly outputBudget: OutputBudget;

  constructor(opts: CoordinatorServiceOptions) {
    this.clock = opts.clock;
    this.heartbeatIntervalMs = opts.heartbeatIntervalMs ?? 1000;
    this.defaultTimeoutMs = opts.heartbeatTimeoutMs ?? 5000;
    this.defaultMaxWorkers = opts.maxWorkers ?? 10_000;
    this.rdzvHostOverride = opts.rdzvHostOverride;
    this.trustAdvertised = opts.trustAdvertisedHosts ?? false;
    this.gate = new WorkerGate({ trustAdvertisedHosts: this.trustAdvertised, nameInUse: (node) => this.byNode.has(node) });
    this.outputBudget = new OutputBudget(this.clock, opts.outputBudget);
    this.pool = new ElasticPool({
      clock: this.clock,
      minWorkers: 1,
      maxWorkers: this.defaultMaxWorkers,
      heartbeatTimeoutMs: this.defaultTimeoutMs,
      onTransition: (t) => this.onTransition(t),
    });
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
    const address = conn.seenFrom;
    const gpus: WorkerGpu[] = req.gpus.map((g) => ({ uuid: g.uuid === null ? null : sanitizeNodeName(g.uuid), name: sanitizeNodeName(g.name), vramTotalMb: g.vramTotalMb }));
    const backend = gpus.length > 0 ? 'cuda' : 'cpu';
    const existingId = this.byNode.get(req.node);
    let workerId: number;
    let incarnation: number;

    if (existingId !== undefined) {
      const pw = this.pool.worker(existingId)!;
      const rec = this.records.get(existingId)!;
      if (LIVE_STATES.has(pw.state)) {
        // Same name from the same machine (the gate checked) while the old one is still live: the agent restarted under us.
        const wasActive = pw.state === 'active';
        this.pool.failWorker(existingId, `agent restarted: ${req.node} joined again before its old session timed out`);
        this.afterFailures([existingId], new Map(wasActive ? [[existingId, 'Its agent restarted and joined again']] : []));
      }
      const before = pw.stateCause;
      const r = this.pool.rejoinWorker(existingId, gpus.length, backend, `joined again as incarnation ${pw.incarnation + 1}`);
      if (!r.ok) throw new ApiProblem(409, `${req.node} cannot join: ${r.reason}`);
      Object.assign(rec, this.recordFields(req, gpus, conn));
      this.clearPending(rec);
      rec.progress = null;
      rec.leaveReceived = false;
      workerId = r.workerId;
      incarnation = r.incarnation;
      this.addEvent('worker-rejoined', 'info', `Worker ${req.node} joined again as incarnation ${incarnation} (before: ${before})`, { workerId });
    } else {
      const r = this.pool.addWorker(req.node, gpus.length, backend);
      if (!r.ok) throw new ApiProblem(409, `${req.node} cannot join: ${r.reason}`);
      workerId = r.workerId;
      incarnation = r.incarnation;
      const rec: WorkerRecord = {
        id: workerId,
        ...this.recordFields(req, gpus, conn),
        progress: null,
        pending: [],
        pendingBase: 1,
        pendingSent: 0,
        leaveReceived: false,
      };
      this.records.set(workerId, rec);
      this.byNode.set(req.node, workerId);
      this.addEvent('worker-joined', 'info', `Worker ${req.node} joined${address ? ` from ${address}` : ''}: ${this.describeHardware(rec)}`, { workerId });
    }
    if (!req.python) {
      this.addEvent('worker-joined', 'warning', `Worker ${req.node} has no Python with torch: it can take part in runs with the direct launcher only`, { workerId });
    }
    this.workersDirty = 'state';
    this.outputBudget.forget(workerId);
    this.pruneGoneWorkers();
    return {
      workerId,
      incarnation,
      heartbeatIntervalMs: this.heartbeatIntervalMs,
      heartbeatTimeoutMs: this.pool.getLimits().heartbeatTimeoutMs,
      sessionSecret: this.gate.openSession(workerId),
    };
  }

  /** Told the worker id whenever an instruction is queued for it (the HTTP layer pokes the agent to poll now). */
  setInstructionListener(listener: ((workerId: number) => void) | null): void {
    this.instructionListener = listener;
  }

  /** Throws 401/404 unless `secret` is the worker's current session secret (every worker request after the join). */
  authenticate(workerId: number, secret: string | null): void {
    const rec = this.requireRecord(workerId);
    this.gate.checkSession(workerId, secret, rec.node);
  }

  /** A presence connection opened for the worker's current session: which incarnation it speaks for. */
  presenceOpened(workerId: number, secret: string | null): { incarnation: number; node: string } {
    this.authenticate(workerId, secret);
    const pw = this.pool.worker(workerId)!;
    const rec = this.records.get(workerId)!;
    if (!LIVE_STATES.has(pw.state)) throw new ApiProblem(409, `worker ${workerId} (${rec.node}) is ${pw.state}; join again`);
    return { incarnation: pw.incarnation, node: rec.node };
  }

  /** The agent said goodbye on its presence connection (its deathrattle): a leave, at once. */
  presenceBye(workerId: number, incarnation: number, reason: string): void {
    const pw = this.pool.worker(workerId);
    if (!pw || pw.incarnation !== incarnation || !LIVE_STATES.has(pw.state)) return;
    this.leave(workerId, { incarnation, reason: reason.trim().slice(0, 200) || 'left' });
  }

  /**
   * The agent's presence connection ended by an orderly close from its machine without a goodbye: its kernel
   * closed the socket because the process is gone. Failed now, instead of at the heartbeat timeout.
   */
  presenceLost(workerId: number, incarnation: number): void {
    const pw = this.pool.worker(workerId);
    const rec = this.records.get(workerId);
    if (!pw || !rec || pw.incarnation !== incarnation || !LIVE_STATES.has(pw.state)) return;
    const wasActive = pw.state === 'active';
    this.pool.failWorker(workerId, 'its agent process ended (connection closed without a goodbye)');
    this.afterFailures([workerId], new Map(wasActive ? [[workerId, 'Its agent process ended']] : []));
  }

  heartbeat(workerId: number, req: HeartbeatRequest): HeartbeatResponse {
    const rec = this.liveRecord(workerId, req.incarnation, 'heartbeat');
    const heartbeatTimeoutMs = this.pool.getLimits().heartbeatTimeoutMs;
    if (!rec) return { instructions: [], heartbeatTimeoutMs };
    this.pool.updateHeartbeat(workerId);
    rec.lastHeartbeatAt = this.clock.now();
    const pw = this.pool.worker(workerId)!;
    if (pw.state === 'syncing' && this.pool.activateWorker(workerId)) this.scheduleReconcile();
    const progress = req.progress ?? null;
    if (progress) this.recordProgress(rec, progress);
    const pending = this.live?.pendingRestart;
    if (pending && pending.waitingFor.delete(workerId)) this.maybeRestart(this.live!);
    if (this.workersDirty === 'none') this.workersDirty = 'beat';
    const out = this.handOut(rec, req.ack);
    this.noteStartsHandedOut(rec, out.instructions);
    // The run's timeout travels with every reply, so agents give up on a lost coordinator on the same clock.
    return { ...out, heartbeatTimeoutMs: this.pool.getLimits().heartbeatTimeoutMs };
  }

  report(workerId: number, req: ReportRequest): void {
    const rec = this.liveRecord(workerId, req.incarnation, 'report');
    if (!rec) return;
    const seq = req.batchSeq;
    // A numbered batch already taken is a repeat whose answer the agent lost: answer it, apply nothing.
    if (seq === undefined || seq > rec.lastBatchSeq) {
      for (const r of req.reports) this.handleReport(rec, r);
      if (seq !== undefined) rec.lastBatchSeq = seq;
    }
    // A report proves its sender alive just as a heartbeat does.
    const pending = this.live?.pendingRestart;
    if (pending && pending.waitingFor.delete(workerId)) this.maybeRestart(this.live!);
  }

  leave(workerId: number, req: LeaveRequest): void {
    const rec = this.requireRecord(workerId);
    const pw = this.pool.worker(workerId)!;
    this.checkIncarnation(rec, req.incarnation, 'leave');
    rec.leaveReceived = true;
    this.clearPending(rec);
    if (pw.state === 'left') return;
    const reason = (req.reason ?? 'left').trim() || 'left';
    const run = this.live;
    const wasMember = !!run && run.workerIds.includes(workerId);
    if (pw.state === 'draining') this.pool.finalizeRemoval(workerId, `drain finished: ${reason}`);
    else this.pool.leaveWorker(workerId, reason === 'left' ? 'left' : `left: ${reason}`);
    this.workersDirty = 'state';
    if (run && wasMember) this.reconcile(run, `worker ${rec.node} left`, 'shrink');
  }

  // ---------------------------------------------------------------------------------------------------------
  // Operator actions

  startRun(spec: RunSpec): RunSnapshot {
    if (this.live) {
      throw new ApiProblem(409, `run "${this.live.spec.name}" (${this.live.id}) is still ${this.live.state}; stop it before starting another`);
    }
    if (spec.minWorkers > spec.maxWorkers) {
      throw new ApiProblem(422, `minWorkers (${spec.minWorkers}) is more than maxWorkers (${spec.maxWorkers})`);
    }
    const id = `run-${++this.runSeq}-${randomBytes(3).toString('hex')}`;
    const run: RunRecord = {
      id,
      spec: { ...spec, command: [...spec.command], env: { ...spec.env } },
      state: 'waiting',
      stateCause: 'waiting for workers',
      generation: 0,
      restartsUsed: 0,
      startedAt: this.clock.now(),
      endedAt: null,
      workerIds: [],
      members: new Map(),
      progressStale: false,
      launchedBy: null,
      pendingRestart: null,
      shardHistory: [],
      progress: null,
      loss: new LossHistory(),
      residency: {},
      rdzvEndpoint: null,
      output: new RunOutputLog(),
    };
    this.runList.push(run);
    this.trimRuns();
    this.live = run;
    this.pool.setLimits({ minWorkers: spec.minWorkers, maxWorkers: spec.maxWorkers, heartbeatTimeoutMs: spec.heartbeatTimeoutMs });
    this.addEvent('run-started', 'info', `Run "${spec.name}" started: ${plural(spec.samples, 'sample')}, ${spec.minWorkers}–${spec.maxWorkers} workers`, { runId: id });
    this.setWaitingCause(run);
    const syncing = this.pool.allWorkers().some((w) => w.state === 'syncing');
    // Someone about to become active gets one heartbeat interval, rather than a relaunch right after the start.
    if (syncing) this.scheduleReconcile();
    else this.reconcile(run, 'run started', 'start');
    this.emitRun(run);
    return this.runSnapshot(run);
  }

  stopRun(runId: string): RunSnapshot {
    const run = this.runList.find((r) => r.id === runId);
    if (!run) throw new ApiProblem(404, `no run "${runId}" (see GET /v1/runs for the runs this coordinator knows)`);
    if (ENDED.has(run.state)) return this.runSnapshot(run);
    this.stopMembers(run, 'run stopped by user');
    this.endRun(run, 'stopped', 'stopped by user');
    this.addEvent('run-stopped', 'info', `Run "${run.spec.name}" stopped by user`, { runId: run.id, generation: run.generation });
    return this.runSnapshot(run);
  }

  drainWorker(workerId: number): WorkerSnapshot[] {
    const rec = this.requireRecord(workerId);
    const pw = this.pool.worker(workerId)!;
    if (pw.state === 'draining') return this.workers();
    if (pw.state !== 'active') {
      throw new ApiProblem(409, `worker ${workerId} (${rec.node}) is ${pw.state}; only an active worker can be drained`);
    }
    const run = this.live;
    const wasMember = !!run && run.workerIds.includes(workerId);
    this.pool.removeWorker(workerId, 'drained by user');
    this.queue(rec, { kind: 'drain', reason: 'drained by user' });
    this.workersDirty = 'state';
    if (run && wasMember) this.reconcile(run, `worker ${rec.node} drained by user`, 'shrink');
    return this.workers();
  }

  // ---------------------------------------------------------------------------------------------------------
  // Snapshots and subscriptions

  workers(): WorkerSnapshot[] {
    return this.pool.allWorkers().map((pw) => {
      const rec = this.records.get(pw.workerId)!;
      return {
        id: pw.workerId,
        node: rec.node,
        incarnation: pw.incarnation,
        state: pw.state,
        stateCause: pw.stateCause,
        gpus: rec.gpus.map((g) => ({ ...g })),
        backend: pw.backend === 'cuda' ? 'cuda' : 'cpu',
        joinedAt: pw.joinedAt,
        lastHeartbeatAt: rec.lastHeartbeatAt,
        step: rec.progress?.step ?? null,
        loss: rec.progress?.loss ?? null,
        samplesPerSec: rec.progress?.samplesPerSec ?? null,
        address: rec.address,
        local: rec.local,
      };
    });
  }

  runs(): RunSnapshot[] {
    return this.runList.map((r) => this.runSnapshot(r));
  }

  events(): CoordinatorEvent[] {
    return this.eventLog.map((e) => ({ ...e }));
  }

  /** The run's recent output, every line prefixed with its node; '' for a run this coordinator does not know. */
  runOutput(runId: string): string {
    return this.runList.find((r) => r.id === runId)?.output.text() ?? '';
  }

  subscribe(listener: (change: CoordinatorChange) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Declares silent workers failed, starts settled scale-ups, and sends the coalesced snapshots. */
  tick(): void {
    const now = this.clock.monotonic();
    const failed = this.pool.expireSilent();
    if (failed.length > 0) {
      const causes = new Map<number, string>();
      for (const f of failed) if (f.from === 'active') causes.set(f.workerId, `No heartbeat for ${Math.round(f.silentMs / 1000)} s`);
      this.afterFailures(failed.map((f) => f.workerId), causes);
    }
    if (this.live) this.expireUnstarted(this.live);
    if (this.live?.pendingRestart) this.maybeRestart(this.live);
    if (this.reconcileDueAt !== null && now >= this.reconcileDueAt) {
      this.reconcileDueAt = null;
      const run = this.live;
      if (run) this.reconcile(run, 'workers joined', run.state === 'paused' ? 'resume' : run.state === 'running' ? 'scale' : 'start');
    }
    this.flush();
  }

  start(): void {
    if (this.timer) return;
    this.timer = this.clock.setInterval(() => this.tick(), TICK_MS);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  // ---------------------------------------------------------------------------------------------------------
  // Membership → generations

  /** Workers of the live run's next generation: active ones able to run it, in join order, at most max_workers. */
  private eligible(run: RunRecord): number[] {
    return this.pool
      .activeWorkerIds()
      .filter((id) => run.spec.launcher === 'direct' || this.records.get(id)!.hasTorch)
      .slice(0, run.spec.maxWorkers);
  }

  /** Brings the live run in line with the active set: relaunch, pause or resume. */
  private reconcile(run: RunRecord, cause: string, why: LaunchWhy, force = false): void {
    if (this.live !== run) return;
    const members = this.eligible(run);
    const min = run.spec.minWorkers;
    if (run.state === 'running') {
      const same = members.length === run.workerIds.length && members.every((id, i) => run.workerIds[i] === id);
      if (!same || force) {
        if (members.length < min) this.pauseRun(run, members.length);
        else this.launchGeneration(run, members, cause, why);
      }
    } else if (run.state === 'waiting' || run.state === 'paused') {
      if (members.length >= min) {
        this.launchGeneration(run, members, cause, run.state === 'paused' ? 'resume' : why);
      } else {
        const before = run.stateCause;
        if (run.state === 'paused') run.stateCause = `${members.length} of ${min} workers active (min_workers ${min})`;
        else this.setWaitingCause(run);
        if (run.stateCause !== before) this.emitRun(run);
      }
    }
    this.reconcileDueAt = null;
  }

  private scheduleReconcile(): void {
    if (!this.live) return;
    this.reconcileDueAt = this.clock.monotonic() + this.heartbeatIntervalMs;
  }

  private launchGeneration(run: RunRecord, members: number[], cause: string, why: LaunchWhy): void {
    // Decided before anything changes: a generation no member can host is not started at all.
    const addresses = chooseRendezvous(
      members.map((id) => {
        const r = this.records.get(id)!;
        return { workerId: id, node: r.node, seenFrom: r.address, coordinatorAddr: r.coordinatorAddr, sameMachine: r.sameMachine, advertiseHost: r.advertiseHost, rdzvPort: r.rdzvPort };
      }),
      { trustAdvertised: this.trustAdvertised },
    );
    if (!addresses.ok) {
      this.holdRun(run, addresses.reason);
      return;
    }
    this.refreshProgress(run);
    const previous = run.state === 'running' ? run.generation : null;
    if (previous !== null) this.stopMembers(run, `generation ${previous + 1} replaces it: ${cause}`);
    run.generation += 1;
    run.workerIds = [...members];
    run.members = new Map(members.map((id) => [id, { started: false, pid: null, exit: null, progress: null, startSentAt: null }]));
    run.launchedBy = why;
    run.pendingRestart = null;
    const wasPaused = run.state === 'paused';
    run.state = 'running';
    run.stateCause = `generation ${run.generation} on ${plural(members.length, 'worker')}`;

    const storeHost = this.records.get(addresses.hostWorkerId)!;
    run.rdzvEndpoint = formatEndpoint(this.rdzvHostOverride ?? addresses.endpointHost, storeHost.rdzvPort);
    const shards = assignShards(run.spec.samples, members);
    const map: ShardMap = {
      generation: run.generation,
      totalSamples: run.spec.samples,
      shards: shards.map((s) => ({ ...s, node: this.records.get(s.workerId)!.node })),
      at: this.clock.now(),
      cause,
    };
    for (const s of map.shards) Object.freeze(s);
    Object.freeze(map.shards);
    run.shardHistory.push(Object.freeze(map));
    if (run.shardHistory.length > MAX_SHARD_HISTORY) run.shardHistory.splice(0, run.shardHistory.length - MAX_SHARD_HISTORY);

    for (const s of shards) {
      const rec = this.records.get(s.workerId)!;
      const plan = buildLaunchPlan({
        runId: run.id,
        generation: run.generation,
        spec: run.spec,
        workerId: s.workerId,
        node: rec.node,
        shardStart: s.start,
        shardEnd: s.end,
        numWorkers: members.length,
        rdzvEndpoint: run.rdzvEndpoint,
        localAddr: addresses.localAddrs.get(s.workerId) ?? rec.advertiseHost,
        rdzvHost: s.workerId === addresses.hostWorkerId,
      });
      this.queue(rec, { kind: 'start', plan });
      run.residency[s.workerId] = run.spec.useGpus
        ? { status: 'pending', detail: 'waiting for the probe after step 0', pid: null, usedMib: null, checkedAt: null }
        : { status: 'not-applicable', detail: 'CPU run: no GPU asked for', pid: null, usedMib: null, checkedAt: null };
    }

    const where = map.shards.map((s) => `${s.node} [${s.start}, ${s.end})`).join(', ');
    const ctx = { runId: run.id, generation: run.generation };
    this.addEvent('shards-rebalanced', 'info', `Run "${run.spec.name}" generation ${run.generation} (${cause}): ${where}`, ctx);
    if (wasPaused) {
      this.addEvent('run-resumed', 'info', `Run "${run.spec.name}" resumed: ${members.length} of ${run.spec.minWorkers} workers active (min_workers ${run.spec.minWorkers})`, ctx);
      this.notify('Run "' + run.spec.name + '" resumed', `${plural(members.length, 'worker')} training again, from the last checkpoint.`, 'info', { view: 'runs', runId: run.id });
    } else if (why === 'failure' || why === 'restart') {
      this.addEvent('run-restarted', 'warning', `Run "${run.spec.name}" restarted as generation ${run.generation} (${cause}); restart ${run.restartsUsed} of ${run.spec.maxRestarts}`, ctx);
    }
    this.emitRun(run);
  }

  private pauseRun(run: RunRecord, eligibleCount: number): void {
    this.stopMembers(run, 'run paused: below min_workers');
    const min = run.spec.minWorkers;
    run.state = 'paused';
    run.pendingRestart = null;
    run.stateCause = `${eligibleCount} of ${min} workers active (min_workers ${min})`;
    run.workerIds = [];
    run.members = new Map();
    this.addEvent('run-paused', 'warning', `Run "${run.spec.name}" paused: ${run.stateCause}`, { runId: run.id, generation: run.generation });
    this.notify(`Run "${run.spec.name}" paused`, `${capitalize(run.stateCause)}. It resumes when enough workers are back.`, 'warning', { view: 'runs', runId: run.id });
    this.emitRun(run);
  }

  /** No member can host the rendezvous for all: the run waits, saying why, instead of burning its restarts. */
  private holdRun(run: RunRecord, reason: string): void {
    this.stopMembers(run, `run waiting: ${reason}`);
    const changed = run.stateCause !== reason;
    run.state = run.generation > 0 ? 'paused' : 'waiting';
    run.stateCause = reason;
    run.pendingRestart = null;
    run.workerIds = [];
    run.members = new Map();
    if (changed) {
      this.addEvent('run-paused', 'warning', `Run "${run.spec.name}" cannot start its next generation: ${reason}`, { runId: run.id, generation: run.generation });
      this.notify(`Run "${run.spec.name}" is waiting`, `${capitalize(reason)}.`, 'warning', { view: 'runs', runId: run.id });
    }
    this.emitRun(run);
  }

  private setWaitingCause(run: RunRecord): void {
    const active = this.pool.activeCount();
    const able = this.eligible(run).length;
    const min = run.spec.minWorkers;
    run.stateCause =
      able < active
        ? `waiting for workers: ${able} of ${min} needed can run it (${active - able} active without Python+torch)`
        : `waiting for workers: ${able} of ${min} active (min_workers ${min})`;
  }

  /** Tells the current generation's members that are still reachable to stop it. */
  private stopMembers(run: RunRecord, reason: string): void {
    if (run.state !== 'running') return;
    for (const id of run.workerIds) {
      const pw = this.pool.worker(id);
      const rec = this.records.get(id);
      if (!pw || !rec || (pw.state !== 'active' && pw.state !== 'syncing')) continue;
      if (run.members.get(id)?.exit) continue; // its process has already ended
      this.queueStop(rec, run.id, run.generation, reason);
    }
  }

  private endRun(run: RunRecord, state: 'finished' | 'failed' | 'stopped', cause: string): void {
    this.refreshProgress(run);
    run.state = state;
    run.stateCause = cause;
    run.pendingRestart = null;
    run.endedAt = this.clock.now();
    run.workerIds = [];
    run.members = new Map();
    if (this.live === run) {
      this.live = null;
      this.reconcileDueAt = null;
      this.pool.setLimits({ minWorkers: 1, maxWorkers: this.defaultMaxWorkers, heartbeatTimeoutMs: this.defaultTimeoutMs });
    }
    this.emitRun(run);
  }

  /**
   * After workers were declared failed: charge a restart if the live run lost a member, relaunch or pause
   * or fail it, then tell the user. Failures found in one check are one incident and cost one restart; a
   * failure of a worker that never started the generation launched to recover from the previous failure is
   * the same incident, not a new one.
   */
  private afterFailures(failedIds: number[], notifyCauses: Map<number, string>, runCause?: string): void {
    const run = this.live;
    let runOutcome: 'rebalanced' | 'paused' | 'failed' | 'none' = 'none';
    for (const id of failedIds) {
      const rec = this.records.get(id);
      if (rec) {
        this.clearPending(rec);
        rec.progress = null;
      }
    }
    this.workersDirty = 'state';
    if (run && run.state === 'running') {
      const lost = failedIds.filter((id) => run.workerIds.includes(id));
      if (lost.length > 0) {
        const recovering = run.launchedBy === 'failure' || run.launchedBy === 'restart';
        const sameIncident = run.pendingRestart !== null || (recovering && lost.every((id) => !run.members.get(id)?.started));
        if (!sameIncident) run.restartsUsed += 1;
        const names = lost.map((id) => this.records.get(id)!.node).join(', ');
        const cause = runCause ?? `worker ${names} failed`;
        if (run.restartsUsed > run.spec.maxRestarts) {
          this.failRun(run, `${cause} and all ${run.spec.maxRestarts} restarts are used`);
          runOutcome = 'failed';
        } else {
          this.reconcile(run, cause, 'failure', true);
          runOutcome = (run.state as RunState) === 'paused' ? 'paused' : 'rebalanced';
        }
      }
    }
    const remaining = this.pool.activeCount();
    for (const id of failedIds) {
      const cause = notifyCauses.get(id);
      if (!cause) continue; // never active: nothing the user was counting on
      const node = this.records.get(id)!.node;
      const tail =
        runOutcome === 'rebalanced'
          ? ', shards rebalanced.'
          : runOutcome === 'paused'
            ? '; the run is paused.'
            : runOutcome === 'failed'
              ? '; the run failed.'
              : '.';
      this.notify(`Worker ${node} failed`, `${cause}. ${plural(remaining, 'worker')} left${tail}`, 'error', { view: 'workers', workerId: id });
    }
  }

  /**
   * Fails the members of the current generation that took their start more than START_TIMEOUT_MS ago and
   * have reported neither `started` nor `exited` (their spawn failed and the report got lost, or a bug), the
   * same way as a silent worker: it goes `failed` (its agent must join again, which kills whatever it runs),
   * the run is charged as for any failure and relaunched without it.
   */
  private expireUnstarted(run: RunRecord): void {
    if (run.state !== 'running' || run.pendingRestart) return;
    const now = this.clock.monotonic();
    const stuck: number[] = [];
    for (const [id, m] of run.members) {
      if (m.started || m.exit || m.startSentAt === null || now - m.startSentAt <= START_TIMEOUT_MS) continue;
      if (this.pool.worker(id)?.state === 'active') stuck.push(id);
    }
    if (stuck.length === 0) return;
    const within = `run "${run.spec.name}" generation ${run.generation} within ${Math.round(START_TIMEOUT_MS / 1000)} s`;
    const causes = new Map<number, string>();
    for (const id of stuck) {
      this.pool.failWorker(id, `did not start ${within}`);
      causes.set(id, `Did not start ${within}`);
    }
    const names = stuck.map((id) => this.records.get(id)!.node).join(', ');
    this.afterFailures(stuck, causes, `worker ${names} did not start ${within}`);
  }

  /** Remembers when each start of the live generation was first handed out, for expireUnstarted(). */
  private noteStartsHandedOut(rec: WorkerRecord, instructions: Instruction[]): void {
    const run = this.live;
    if (!run || run.state !== 'running') return;
    for (const i of instructions) {
      if (i.kind !== 'start' || i.plan.runId !== run.id || i.plan.generation !== run.generation) continue;
      const member = run.members.get(rec.id);
      if (member && member.startSentAt === null) member.startSentAt = this.clock.monotonic();
    }
  }

  /** Relaunches a failed generation once every other member is known alive (or the wait has outlasted the timeout). */
  private maybeRestart(run: RunRecord): void {
    const pending = run.pendingRestart;
    if (!pending || this.live !== run || run.state !== 'running') return;
    const waited = this.clock.monotonic() - pending.since;
    if (pending.waitingFor.size > 0 && waited <= this.pool.getLimits().heartbeatTimeoutMs) return;
    this.reconcile(run, pending.cause, 'restart', true);
  }

  private failRun(run: RunRecord, cause: string): void {
    this.stopMembers(run, `run failed: ${cause}`);
    this.endRun(run, 'failed', cause);
    this.addEvent('run-failed', 'error', `Run "${run.spec.name}" failed: ${cause}`, { runId: run.id, generation: run.generation });
    this.notify(`Run "${run.spec.name}" failed`, `${capitalize(cause)}.`, 'error', { view: 'runs', runId: run.id });
  }

  // ---------------------------------------------------------------------------------------------------------
  // Reports

  private handleReport(rec: WorkerRecord, r: Report): void {
    const run = this.runList.find((x) => x.id === r.runId);
    if (!run) return;
    const current = this.live === run && run.state === 'running' && r.generation === run.generation;
    const member = current ? run.members.get(rec.id) : undefined;
    switch (r.type) {
      case 'output': {
        // Another machine's output must not erase the terminal or forge lines (cursor moves, OSC, lone CR).
        const clean = rec.sameMachine ? r.data : sanitizeRemoteOutput(r.data, rec.outputState);
        const { kept, notice } = this.outputBudget.take(rec.id, rec.node, clean);
        const data = kept + (notice ?? '');
        if (!data) return;
        run.output.append(rec.id, rec.node, data);
        this.broadcast({ type: 'output', runId: run.id, workerId: rec.id, node: rec.node, data });
        return;
      }
      case 'started':
        if (member) {
          member.started = true;
          member.pid = r.pid;
        }
        return;
      case 'exited': {
        const pw = this.pool.worker(rec.id)!;
        if (pw.state === 'draining') {
          this.pool.finalizeRemoval(rec.id, `drain finished: training ${describeExitStatus(r.exitCode, r.signal)}`);
          this.workersDirty = 'state';
          return;
        }
        if (!member || r.requested) return;
        member.exit = { exitCode: r.exitCode, signal: r.signal };
        if (r.exitCode === 0 && r.signal === null) {
          if ([...run.members.values()].every((m) => m.exit && m.exit.exitCode === 0 && m.exit.signal === null)) this.finishRun(run);
          return;
        }
        if (run.pendingRestart) return; // this generation already failed: one restart for it
        const cause = describeExit(rec.node, r.exitCode, r.signal);
        run.restartsUsed += 1;
        if (run.restartsUsed > run.spec.maxRestarts) {
          this.failRun(run, `${cause} and all ${run.spec.maxRestarts} restarts are used`);
          return;
        }
        const others = run.workerIds.filter((id) => id !== rec.id && !run.members.get(id)?.exit);
        run.pendingRestart = { cause, since: this.clock.monotonic(), waitingFor: new Set(others) };
        this.maybeRestart(run);
        return;
      }
      case 'residency': {
        if (this.live !== run || r.generation !== run.generation) return;
        run.residency[rec.id] = { status: r.status, detail: r.detail, pid: r.pid, usedMib: r.usedMib, checkedAt: this.clock.now() };
        const ctx = { workerId: rec.id, runId: run.id, generation: run.generation };
        if (r.status === 'pass') {
          this.addEvent('residency', 'info', `GPU resident on ${rec.node}: pid ${r.pid} holds ${r.usedMib ?? '?'} MiB`, ctx);
        } else {
          const detail = r.detail.replace(/^NOT on the GPU:\s*/i, '');
          this.addEvent('residency', 'error', `NOT on the GPU on ${rec.node}: ${detail}`, ctx);
          this.notify(`Run "${run.spec.name}" is not on the GPU on ${rec.node}`, `${capitalize(detail)}.`.replace(/\.\.$/, '.'), 'error', { view: 'runs', runId: run.id });
        }
        this.emitRun(run);
        return;
      }
    }
  }

  private finishRun(run: RunRecord): void {
    this.refreshProgress(run);
    const n = run.workerIds.length;
    const step = run.progress?.step;
    this.endRun(run, 'finished', `all ${plural(n, 'worker')} finished (exit code 0)`);
    const loss = run.progress?.loss;
    const detail = [step !== undefined ? `step ${step}` : null, loss !== null && loss !== undefined ? `loss ${loss.toPrecision(4)}` : null, plural(run.restartsUsed, 'restart') + ' used']
      .filter(Boolean)
      .join(', ');
    this.addEvent('run-finished', 'info', `Run "${run.spec.name}" finished: ${detail}`, { runId: run.id, generation: run.generation });
    this.notify(`Run "${run.spec.name}" finished`, `${capitalize(detail)}.`, 'info', { view: 'runs', runId: run.id });
  }

  private recordProgress(rec: WorkerRecord, progress: Progress): void {
    rec.progress = progress;
    const run = this.live;
    if (!run || run.state !== 'running' || progress.runId !== run.id || progress.generation !== run.generation) return;
    const member = run.members.get(rec.id);
    if (!member) return;
    member.progress = progress;
    run.progressStale = true;
    this.dirtyRuns.add(run);
  }

  /**
   * Folds the members' latest progress into the run's: the furthest step (with its loss), samples/s summed.
   * Done when the run is read or sent, not on every heartbeat, so a heartbeat costs the same with 1 or 1,000 members.
   */
  private refreshProgress(run: RunRecord): void {
    if (!run.progressStale) return;
    run.progressStale = false;
    let best: Progress | null = null;
    let samplesPerSec: number | null = null;
    let resumedFrom: number | null = null;
    for (const m of run.members.values()) {
      const p = m.progress;
      if (!p) continue;
      if (!best || p.step > best.step) best = p;
      if (p.samplesPerSec !== null) samplesPerSec = (samplesPerSec ?? 0) + p.samplesPerSec;
      if (p.resumedFrom !== null) resumedFrom = Math.max(resumedFrom ?? 0, p.resumedFrom);
    }
    if (!best) return;
    const loss = best.loss ?? null;
    run.progress = { step: best.step, totalSteps: null, loss, samplesPerSec, resumedFrom, at: this.clock.now() };
    if (loss !== null) run.loss.add(best.step, loss);
    if (this.live === run) this.pool.setStep(best.step);
  }

  // ---------------------------------------------------------------------------------------------------------
  // Helpers

  private recordFields(req: JoinRequest, gpus: WorkerGpu[], conn: ConnectionFacts) {
    return {
      node: req.node,
      gpus,
      cpuCores: req.cpuCores,
      ramMb: req.ramMb,
      address: conn.seenFrom,
      coordinatorAddr: conn.coordinatorAddr,
      sameMachine: conn.sameMachine,
      advertiseHost: req.advertiseHost,
      rdzvPort: req.rdzvPort,
      hasTorch: req.python !== null,
      local: req.local ?? false,
      lastHeartbeatAt: this.clock.now(),
      // Batch numbers start again with every incarnation.
      lastBatchSeq: 0,
      outputState: {},
    };
  }

  /**
   * Forgets the oldest failed or left workers beyond MAX_GONE_WORKERS (21,000 random joins once grew the
   * coordinator by 60 MB and its state reply to 6.5 MB). Their names stay bound to their machines.
   */
  private pruneGoneWorkers(): void {
    const gone = this.pool.allWorkers().filter((w) => w.state === 'failed' || w.state === 'left');
    if (gone.length <= MAX_GONE_WORKERS) return;
    const members = new Set(this.live?.workerIds ?? []);
    for (const w of gone.slice(0, gone.length - MAX_GONE_WORKERS)) {
      if (members.has(w.workerId)) continue;
      const rec = this.records.get(w.workerId);
      this.pool.forget(w.workerId);
      this.records.delete(w.workerId);
      this.gate.closeSession(w.workerId);
      this.outputBudget.forget(w.workerId);
      if (rec && this.byNode.get(rec.node) === w.workerId) this.byNode.delete(rec.node);
    }
    this.workersDirty = 'state';
  }

  private describeHardware(rec: WorkerRecord): string {
    const gpuText = rec.gpus.length === 0 ? 'no GPU' : `${plural(rec.gpus.length, 'GPU')} (${[...new Set(rec.gpus.map((g) => g.name))].join(', ')})`;
    return `${gpuText}, ${plural(rec.cpuCores, 'core')}, ${(rec.ramMb / 1024).toFixed(0)} GiB RAM`;
  }

  private requireRecord(workerId: number): WorkerRecord {
    const rec = this.records.get(workerId);
    if (!rec) {
      throw new ApiProblem(404, `no worker ${workerId} here: it never joined this coordinator, or the coordinator restarted since; join again`);
    }
    return rec;
  }

  private checkIncarnation(rec: WorkerRecord, incarnation: number, what: string): void {
    const pw = this.pool.worker(rec.id)!;
    if (incarnation !== pw.incarnation) {
      throw new ApiProblem(
        409,
        `stale ${what}: worker ${rec.id} (${rec.node}) is at incarnation ${pw.incarnation}, this came from incarnation ${incarnation}; stop its training and join again`,
      );
    }
    if (pw.state === 'failed') {
      throw new ApiProblem(409, `stale ${what}: worker ${rec.id} (${rec.node}) was declared failed (${pw.stateCause}); stop its training and join again`);
    }
  }

  /** The worker's record when it may still speak; null when it drained and is only winding down (answered, ignored). */
  private liveRecord(workerId: number, incarnation: number, what: string): WorkerRecord | null {
    const rec = this.requireRecord(workerId);
    this.checkIncarnation(rec, incarnation, what);
    const pw = this.pool.worker(workerId)!;
    if (pw.state === 'left') {
      if (rec.leaveReceived) throw new ApiProblem(409, `worker ${workerId} (${rec.node}) has left (${pw.stateCause}); join again to take part`);
      // Drained: its training stopped and its goodbye is on the way. Answer without instructions.
      return what === 'report' ? rec : null;
    }
    return rec;
  }

  private queue(rec: WorkerRecord, instruction: Instruction): void {
    rec.pending.push(instruction);
    this.instructionListener?.(rec.id);
    if (rec.pending.length > MAX_PENDING_INSTRUCTIONS) this.dropOldest(rec, rec.pending.length - MAX_PENDING_INSTRUCTIONS);
  }

  private dropOldest(rec: WorkerRecord, count: number): void {
    const n = Math.max(0, Math.min(count, rec.pending.length));
    rec.pending.splice(0, n);
    rec.pendingBase += n;
    rec.pendingSent = Math.max(0, rec.pendingSent - n);
  }

  /** Forgets every pending instruction; sequence numbers go on rising, so an old number never means a new instruction. */
  private clearPending(rec: WorkerRecord): void {
    this.dropOldest(rec, rec.pending.length);
  }

  /**
   * The instructions for a heartbeat's answer. An agent that acknowledges (`ack`) gets every instruction past
   * its ack, again and again until acknowledged, so an answer lost in transit loses nothing; one that does not
   * gets each instruction once.
   */
  private handOut(rec: WorkerRecord, ack: number | undefined): { instructions: Instruction[]; firstSeq?: number } {
    if (ack === undefined) {
      const instructions = rec.pending.slice();
      this.clearPending(rec);
      return { instructions };
    }
    this.dropOldest(rec, ack - rec.pendingBase + 1);
    rec.pendingSent = rec.pending.length;
    return { instructions: rec.pending.slice(), firstSeq: rec.pendingBase };
  }

  /**
   * A stop for a generation whose start was never handed out cancels that start instead. A start already
   * handed out (even if not yet acknowledged) may be running, so it gets its stop.
   */
  private queueStop(rec: WorkerRecord, runId: string, generation: number, reason: string): void {
    const i = rec.pending.findIndex(
      (x, index) => index >= rec.pendingSent && x.kind === 'start' && x.plan.runId === runId && x.plan.generation === generation,
    );
    if (i !== -1) {
      // Never sent, so no agent saw its number: the ones after it move up and stay consecutive.
      rec.pending.splice(i, 1);
      return;
    }
    this.queue(rec, { kind: 'stop', runId, generation, reason });
  }

  private onTransition(t: PoolTransition): void {
    if (t.from === null || t.rejoined) return; // join() writes these itself, with the hardware
    const rec = this.records.get(t.workerId);
    const node = rec?.node ?? t.nodeId;
    const ctx = { workerId: t.workerId };
    switch (t.to) {
      case 'active':
        this.addEvent('worker-active', 'info', `Worker ${node} is active: ${t.cause}`, ctx);
        break;
      case 'draining':
        this.addEvent('worker-draining', 'info', `Worker ${node} is draining: ${t.cause}`, ctx);
        break;
      case 'left':
        this.addEvent('worker-left', 'info', t.cause.startsWith('left') ? `Worker ${node} ${t.cause}` : `Worker ${node} left — ${t.cause}`, ctx);
        break;
      case 'failed':
        this.addEvent('worker-failed', t.from === 'active' ? 'error' : 'warning', `Worker ${node} failed — ${t.cause}`, ctx);
        break;
      case 'syncing':
        break;
    }
    this.workersDirty = 'state';
  }

  private addEvent(
    kind: CoordinatorEventKind,
    severity: EventSeverity,
    message: string,
    ctx: { workerId?: number; runId?: string; generation?: number } = {},
  ): void {
    const event: CoordinatorEvent = { seq: ++this.eventSeq, at: this.clock.now(), kind, severity, message, ...ctx };
    this.eventLog.push(event);
    if (this.eventLog.length > MAX_EVENTS) this.eventLog.splice(0, this.eventLog.length - MAX_EVENTS);
    this.broadcast({ type: 'event', event });
  }

  private notify(title: string, body: string, severity: EventSeverity, target: UserNotification['target']): void {
    const notification: UserNotification = { id: `n${++this.notificationSeq}`, title, body, severity };
    if (target) notification.target = target;
    this.broadcast({ type: 'notification', notification });
  }

  private emitRun(run: RunRecord): void {
    this.dirtyRuns.delete(run);
    if (this.listeners.size > 0) this.broadcast({ type: 'run', run: this.runSnapshot(run) });
  }

  /**
   * Sends what changed since the last tick. State changes go out at once; heartbeat-only changes (last
   * heartbeat, step) and run progress at most once a second, so 1,000 workers beating cost 1 snapshot a second.
   */
  private flush(): void {
    const now = this.clock.monotonic();
    if (this.workersDirty === 'state' || (this.workersDirty === 'beat' && now - this.lastWorkersEmit >= PROGRESS_EMIT_MS)) {
      this.workersDirty = 'none';
      this.lastWorkersEmit = now;
      if (this.listeners.size > 0) this.broadcast({ type: 'workers', workers: this.workers() });
    }
    if (this.dirtyRuns.size > 0 && now - this.lastProgressEmit >= PROGRESS_EMIT_MS) {
      this.lastProgressEmit = now;
      for (const run of [...this.dirtyRuns]) this.emitRun(run);
    }
  }

  private broadcast(change: CoordinatorChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A broken listener must not stop the coordinator or the other listeners.
      }
    }
  }

  private trimRuns(): void {
    while (this.runList.length > MAX_RUNS_KEPT) {
      const i = this.runList.findIndex((r) => ENDED.has(r.state));
      if (i === -1) break;
      this.runList.splice(i, 1);
    }
  }

  private runSnapshot(run: RunRecord): RunSnapshot {
    this.refreshProgress(run);
    const residency: Record<number, ResidencyVerdict> = {};
    for (const [k, v] of Object.entries(run.residency)) residency[Number(k)] = { ...v };
    return {
      id: run.id,
      spec: { ...run.spec, command: [...run.spec.command], env: { ...run.spec.env } },
      state: run.state,
      stateCause: run.stateCause,
      generation: run.generation,
      restartsUsed: run.restartsUsed,
      startedAt: run.startedAt,
      endedAt: run.endedAt,
      workerIds: [...run.workerIds],
      // Shard maps never change once made (they are frozen), so snapshots share them instead of copying 50 × n ranges.
      shardHistory: [...run.shardHistory],
      progress: run.progress ? { ...run.progress } : null,
      lossHistory: run.loss.snapshot().map((p) => ({ ...p, generation: run.generation })),
      generationMarks: [],
      workerRows: [],
      workerFailures: 0,
      residency,
      rdzvEndpoint: run.rdzvEndpoint,
    };
  }
}
