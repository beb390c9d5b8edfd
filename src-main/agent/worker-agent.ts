/**
 * The worker agent: joins a coordinator, heartbeats, and runs what it is told in a pty. It is the same code
 * as a standalone OS process (`gpu-share worker`) and inside the desktop app (the app's own machine).
 *
 * Its one hard promise is "no orphans": training must never outlive the agent's link to the coordinator. If
 * heartbeats fail for longer than the coordinator's timeout, the coordinator has already declared this worker
 * failed and re-formed the run without it, so the agent kills its training process group and keeps trying to
 * join again as a new incarnation. Everything the coordinator sends is parsed before use; a bad instruction is
 * logged and ignored, never a crash. Besides heartbeats it holds a presence WebSocket (presence-link.ts), so
 * the coordinator learns of its death at once; every request after the join carries the session's secret.
 */
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DetectedGpu, HardwareSnapshot } from '../../src-shared/hardware';
import { apiPaths, type Instruction, type JoinRequest, type JoinResponse, type LaunchPlan, type Progress } from '../../src-shared/worker-protocol';
import { findAssetsDir } from '../core/assets-dir';
import { detectHardware } from '../core/hardware/detect-hardware';
import { probeResidency, type ProbeResidencyOptions, type ResidencyResult } from '../core/hardware/residency';
import { systemClock, type Clock, type PtySpawner } from '../core/ports';
import { buildTrainingEnv } from '../core/runs/child-env';
import { findPython } from '../core/runs/python-finder';
import type { TrainerProgressLine } from '../core/runs/progress-line';
import { buildLaunchCommand } from '../core/runs/torchrun-command';
import { DEFAULT_STOP_GRACE_MS, TrainingProcess, type ProcessExit } from '../core/runs/training-process';
import { CoordinatorClient, describeFailure, findFreePort, type ApiReply } from './coordinator-client';
import { readHeartbeatAnswer } from './heartbeat-answer';
import { clampTimeout, JoinError, joinOnce, nodeNameFrom, retryJoin } from './join-coordinator';
import { loadOrCreateMachineId } from './machine-id';
import { PresenceLink, presenceUrl } from './presence-link';
import { ReportQueue } from './report-queue';
import { residencyReport } from './residency-report';
import { resolveScript } from './resolve-script';

/**
 * How long the agent hears nothing before it gives the coordinator up and stops its training: the timeout
 * plus half of it (at least two intervals). The coordinator judges by when requests arrive, the agent by when
 * answers do, and on a slow link answers come later than requests: giving up on the same clock turned a poor
 * link into failures the coordinator never declared. When the coordinator does fail this worker, the next
 * answer that gets through says so (401/404/409) and the agent stops at once.
 */
export function lostAfterMs(joined: Pick<JoinResponse, 'heartbeatTimeoutMs' | 'heartbeatIntervalMs'>): number {
  return joined.heartbeatTimeoutMs + Math.max(2 * joined.heartbeatIntervalMs, Math.floor(joined.heartbeatTimeoutMs / 2));
}

export const AGENT_VERSION = '0.1.0';

/** How often buffered output and events go to the coordinator. */
export const REPORT_FLUSH_MS = 200;
/** Residency is probed at the first progress line, or this long after the start if none comes. */
export const RESIDENCY_START_WINDOW_MS = 5000;

export interface WorkerAgentOptions {
  coordinatorUrl: string;
  token: string;
  /** Node name; default the hostname. */
  name?: string;
  /** Checkpoints (<dataDir>/checkpoints/<runId>) and torchrun's logs (<dataDir>/logs/<runId>). */
  dataDir: string;
  pty: PtySpawner;
  clock?: Clock;
  detect?: () => Promise<HardwareSnapshot>;
  findPython?: typeof findPython;
  /** Address other workers reach this one at; default the local address of the connection to the coordinator. */
  advertiseHost?: string;
  /** True for the worker inside the desktop app. */
  local?: boolean;
  /** Human lines: joins, instructions, exits. */
  log?: (line: string) => void;
  /** Raw training output as it arrives (the CLI's --show-output). */
  onOutput?: (data: string) => void;
  /** Environment to find Python in and to pass (filtered) to training; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Where relative script paths resolve; default the current directory. */
  workDir?: string;
  /** Residency probe; default the nvidia-smi one from core/hardware. */
  probeResidency?: (opts: ProbeResidencyOptions) => Promise<ResidencyResult>;
  /** SIGTERM → SIGKILL grace when stopping training; default 3 s. */
  stopGraceMs?: number;
  /** Probe residency this long after the start when no progress line came first; default 5 s. */
  residencyStartWindowMs?: number;
  /** SHA-256 fingerprint of the coordinator's certificate, from the join command; required for https URLs. */
  certSha256?: string;
  /**
   * Keep retrying the first join (1 s doubling to 30 s) while the coordinator does not answer or answers 5xx,
   * instead of failing start() at once; what `gpu-share worker` wants. A refusal still fails at once.
   */
  retryFirstJoin?: boolean;
  /** Open the presence WebSocket after each join (default true). */
  presence?: boolean;
}

export type AgentPhase = 'idle' | 'joining' | 'joined' | 'lost' | 'stopping' | 'stopped';

export interface AgentExit {
  reason: 'stopped' | 'drained';
  detail: string;
}

export interface AgentStatus {
  phase: AgentPhase;
  node: string;
  workerId: number | null;
  incarnation: number | null;
  coordinatorUrl: string;
  run: { runId: string; generation: number; pid: number | null } | null;
  progress: Progress | null;
}

export { JoinError } from './join-coordinator';

interface CurrentRun {
  plan: LaunchPlan;
  proc: TrainingProcess | null;
  stopRequested: boolean;
  /** Latest progress line of each local rank, for the node's samples/s. */
  ranks: Map<number, TrainerProgressLine>;
  residencyStarted: boolean;
  residencyTimer: { cancel(): void } | null;
  /** The join session the run was started under; a rejoin orphans nothing because it kills the run first. */
  session: number;
}

function safeSegment(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120) || 'run';
}

function describeExit(exit: ProcessExit): string {
  if (exit.signal !== null) return `killed by signal ${exit.signal}`;
  return `exited with code ${exit.exitCode}`;
}

export class WorkerAgent {
  private readonly opts: WorkerAgentOptions;
  private readonly clock: Clock;
  private readonly client: CoordinatorClient;
  private readonly env: NodeJS.ProcessEnv;
  private readonly log: (line: string) => void;
  private readonly stopGraceMs: number;
  private readonly reports = new ReportQueue();

  private phase: AgentPhase = 'idle';
  private node: string;
  private hardware: HardwareSnapshot | null = null;
  private python: { path: string; torchVersion: string } | null = null;
  private rdzvPort = 0;
  private machineId = '';
  private presence: PresenceLink | null = null;
  /** Ends the first join's wait between tries, so stop() need not wait up to 30 s. */
  private wakeJoinRetry: (() => void) | null = null;
  private joined: JoinResponse | null = null;
  private session = 0;
  private lastOkAt = 0;
  private lastRejoinComplaint = '';
  /** What the latest failed heartbeat got back, for the message when the coordinator is declared lost. */
  private lastFailure: string | null = null;

  private current: CurrentRun | null = null;
  private lastProgress: Progress | null = null;
  /** Sequence number of the last instruction taken in this session (0: none); sent back as the heartbeat's ack. */
  private lastSeq = 0;
  private instructionChain: Promise<void> = Promise.resolve();

  private heartbeatTimer: { cancel(): void } | null = null;
  /** A heartbeat is in flight; a poke meanwhile asks for another right after it. */
  private ticking = false;
  private pokedWhileTicking = false;
  private watchdog: { cancel(): void } | null = null;
  private flushTimer: { cancel(): void } | null = null;
  private flushing: Promise<void> | null = null;

  private resolveExit!: (exit: AgentExit) => void;
  /** Resolves when the agent has stopped for good: stop() was called or the coordinator drained it. */
  readonly exited: Promise<AgentExit>;
  private stopping: Promise<void> | null = null;

  constructor(opts: WorkerAgentOptions) {
    this.opts = opts;
    this.clock = opts.clock ?? systemClock;
    this.client = new CoordinatorClient(opts.coordinatorUrl, opts.token, opts.certSha256 ? { certSha256: opts.certSha256 } : {});
    this.env = opts.env ?? process.env;
    this.log = opts.log ?? (() => undefined);
    this.stopGraceMs = opts.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    this.node = opts.name ?? nodeNameFrom(os.hostname());
    this.exited = new Promise((resolve) => {
      this.resolveExit = resolve;
    });
  }

  /** Registers a listener for the agent's end (stop or drain). */
  onExit(listener: (exit: AgentExit) => void): void {
    void this.exited.then(listener);
  }

  status(): AgentStatus {
    const run = this.current;
    return {
      phase: this.phase,
      node: this.node,
      workerId: this.joined?.workerId ?? null,
      incarnation: this.joined?.incarnation ?? null,
      coordinatorUrl: this.client.base.href,
      run: run ? { runId: run.plan.runId, generation: run.plan.generation, pid: run.proc?.pid ?? null } : null,
      progress: this.lastProgress,
    };
  }

  /** Detects this machine, joins, and starts heartbeating; rejects with a JoinError a person can act on. */
  async start(): Promise<JoinResponse> {
    if (this.phase !== 'idle') throw new Error(`the agent was already started (it is ${this.phase})`);
    this.phase = 'joining';
    try {
      mkdirSync(this.opts.dataDir, { recursive: true });
      const problem = this.client.trustProblem();
      if (problem) throw new JoinError('untrusted', problem); // before anything else, the token least of all, is sent
      this.machineId = loadOrCreateMachineId(this.opts.dataDir);
      const detect = this.opts.detect ?? (() => detectHardware({ env: this.env }));
      const find = this.opts.findPython ?? findPython;
      const [hardware, python, port] = await Promise.all([detect(), find(this.env), findFreePort()]);
      this.hardware = hardware;
      this.python = python;
      this.rdzvPort = port;
      if (!this.opts.name && hardware.hostname) this.node = nodeNameFrom(hardware.hostname);
      if (!python) this.log('no Python with PyTorch found: only runs with the direct launcher can start here (set GPU_SHARE_PYTHON to fix)');
      const joined = this.opts.retryFirstJoin
        ? await retryJoin(() => this.join(), {
            clock: this.clock,
            log: this.log,
            stopped: () => this.stopping !== null,
            onWait: (wake) => {
              this.wakeJoinRetry = wake;
            },
          })
        : await this.join();
      if (this.stopping) {
        // stop() came while we were joining: take the seat back at once instead of starting to work.
        await this.client.post(apiPaths.leave(joined.workerId), { incarnation: joined.incarnation, reason: 'stopped while joining' }, 2000);
        return joined;
      }
      this.onJoined(joined, false);
      this.scheduleHeartbeat(joined.heartbeatIntervalMs);
      this.watchdog = this.clock.setInterval(() => this.checkLost(), Math.max(50, Math.min(500, Math.floor(joined.heartbeatTimeoutMs / 10))));
      this.flushTimer = this.clock.setInterval(() => void this.flushReports(), REPORT_FLUSH_MS);
      return joined;
    } catch (error) {
      this.phase = 'stopped';
      this.resolveExit({ reason: 'stopped', detail: error instanceof Error ? error.message : String(error) });
      throw error;
    }
  }

  /** Stops training (SIGTERM, then SIGKILL after the grace), says goodbye to the coordinator, and ends. */
  stop(reason = 'stopped'): Promise<void> {
    return this.finish('stopped', reason);
  }

  /** SIGKILLs the current training group at once (a second Ctrl-C); stop() still has to be awaited. */
  abort(): void {
    const proc = this.current?.proc;
    if (proc && !proc.hasExited) {
      this.current!.stopRequested = true;
      void proc.kill();
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Joining

  private joinRequest(advertiseHost: string): JoinRequest {
    const hw = this.hardware!;
    const gpus = this.usableGpus().map((g) => ({ uuid: g.uuid, name: g.name, vramTotalMb: g.vramTotalMb }));
    return {
      node: this.node,
      agentVersion: AGENT_VERSION,
      machineId: this.machineId,
      gpus,
      cpuCores: Math.max(0, Math.round(hw.logicalCores || hw.physicalCores || 0)),
      ramMb: Math.max(0, Math.round(hw.ramTotalMb || 0)),
      advertiseHost,
      rdzvPort: this.rdzvPort,
      python: this.python,
      local: this.opts.local ?? false,
    };
  }

  /** GPUs CUDA can be given: NVIDIA ones (others cannot be named in CUDA_VISIBLE_DEVICES). */
  private usableGpus(): DetectedGpu[] {
    return (this.hardware?.gpus ?? []).filter((g) => g.vendor === 'nvidia');
  }

  private async join(): Promise<JoinResponse> {
    const { joined } = await joinOnce(this.client, (host) => this.joinRequest(host), this.opts.advertiseHost);
    return joined;
  }

  private onJoined(joined: JoinResponse, again: boolean): void {
    this.joined = joined;
    this.session += 1;
    this.phase = 'joined';
    this.lastOkAt = this.clock.monotonic();
    this.lastFailure = null;
    this.lastRejoinComplaint = '';
    this.lastSeq = 0;
    this.reports.clear();
    this.openPresence(joined);
    const gpus = this.usableGpus().length;
    this.log(
      `${again ? 'joined again' : 'joined'} ${this.client.base.origin} as worker ${joined.workerId} (incarnation ${joined.incarnation}), node ${this.node}, ` +
        `${gpus} GPU${gpus === 1 ? '' : 's'}, ${this.python ? `torch ${this.python.torchVersion}` : 'no torch'}; heartbeat every ${joined.heartbeatIntervalMs} ms`,
    );
  }

  /** The presence link of this session; the previous one was closed when the session was lost. */
  private openPresence(joined: JoinResponse): void {
    if (this.opts.presence === false) return;
    const session = this.session;
    const link = new PresenceLink({
      url: presenceUrl(this.client.base, joined.workerId),
      headers: this.client.authHeaders(),
      connector: this.client.connector,
      heartbeatTimeoutMs: () => this.joined?.heartbeatTimeoutMs ?? joined.heartbeatTimeoutMs,
      onRefused: (reason) => {
        if (session === this.session) this.becomeLost(`the coordinator ended this session (${reason})`);
      },
      onPoke: () => {
        if (session === this.session) this.heartbeatNow();
      },
      log: this.log,
      clock: this.clock,
    });
    this.presence = link;
    link.start();
  }

  // -------------------------------------------------------------------------------------------------------
  // Heartbeats, loss of the coordinator, rejoining

  private scheduleHeartbeat(delayMs: number): void {
    if (this.phase === 'stopping' || this.phase === 'stopped') return;
    this.heartbeatTimer = this.clock.setTimeout(() => void this.tick(), Math.max(0, delayMs));
  }

  /** The coordinator poked: heartbeat at once (after the one in flight, if any) to fetch waiting instructions. */
  private heartbeatNow(): void {
    if (this.phase !== 'joined') return;
    if (this.ticking) {
      this.pokedWhileTicking = true;
      return;
    }
    this.heartbeatTimer?.cancel();
    this.scheduleHeartbeat(0);
  }

  private async tick(): Promise<void> {
    const began = this.clock.monotonic();
    const interval = this.joined?.heartbeatIntervalMs ?? 1000;
    this.ticking = true;
    this.pokedWhileTicking = false;
    try {
      if (this.phase === 'lost') await this.tryRejoin();
      else if (this.phase === 'joined') await this.heartbeat();
    } catch (error) {
      this.log(`internal error in the heartbeat loop (carrying on): ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.ticking = false;
    }
    this.scheduleHeartbeat(this.pokedWhileTicking ? 0 : interval - (this.clock.monotonic() - began));
  }

  private async heartbeat(): Promise<void> {
    const joined = this.joined!;
    const session = this.session;
    // A hung request must not eat the whole timeout: give up on it halfway and try again.
    const timeoutMs = Math.max(200, Math.min(Math.floor(joined.heartbeatTimeoutMs / 2), 5000));
    const reply = await this.client.post(apiPaths.heartbeat(joined.workerId), { incarnation: joined.incarnation, progress: this.lastProgress, ack: this.lastSeq }, timeoutMs);
    if (session !== this.session || this.phase !== 'joined') return;
    if (reply.kind === 'ok') {
      if (this.acceptInstructions(reply.body, session)) {
        this.lastOkAt = this.clock.monotonic();
        this.lastFailure = null;
      }
      this.checkLost();
      return;
    }
    if (reply.kind === 'http-error' && (reply.status === 409 || reply.status === 404 || reply.status === 401)) {
      this.becomeLost(`the coordinator no longer knows this session (${reply.status}: ${reply.message})`);
      return;
    }
    this.checkLost(reply);
  }

  /** Declares the coordinator lost once heartbeats have failed for longer than its timeout. */
  private checkLost(reply?: ApiReply): void {
    if (reply && reply.kind !== 'ok') this.lastFailure = describeFailure(reply);
    if (this.phase !== 'joined' || !this.joined) return;
    const silentMs = this.clock.monotonic() - this.lastOkAt;
    if (silentMs <= lostAfterMs(this.joined)) return;
    const why = this.lastFailure ? ` (last answer: ${this.lastFailure})` : ' (no answer at all)';
    this.becomeLost(`no successful heartbeat for ${(silentMs / 1000).toFixed(1)} s${why}`);
  }

  private becomeLost(why: string): void {
    if (this.phase !== 'joined') return;
    this.phase = 'lost';
    this.session += 1; // instructions and reports of the old session are void from here on
    this.reports.clear();
    void this.presence?.close('lost the coordinator');
    this.presence = null;
    const run = this.current;
    this.log(`lost the coordinator: ${why}; ${run ? `stopping run ${run.plan.runId} generation ${run.plan.generation} and ` : ''}trying to join again`);
    if (run?.proc) void run.proc.stop(this.stopGraceMs);
  }

  private async tryRejoin(): Promise<void> {
    // A rejoin never overlaps training from the old session: wait for it to be gone first.
    const run = this.current;
    if (run?.proc && !run.proc.hasExited) await run.proc.exited;
    if (this.phase !== 'lost') return;
    try {
      const joined = await this.join();
      if (this.phase !== 'lost') return;
      this.onJoined(joined, true);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (message !== this.lastRejoinComplaint) {
        this.log(`still trying to join again: ${message}`);
        this.lastRejoinComplaint = message;
      }
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Instructions

  /** Takes a heartbeat's answer; false when it is not one (which counts as a failed heartbeat). */
  private acceptInstructions(body: unknown, session: number): boolean {
    const answer = readHeartbeatAnswer(body);
    if (!answer.ok) {
      this.lastFailure = answer.why;
      return false;
    }
    const { instructions, firstSeq } = answer;
    for (const invalid of answer.invalid) this.log(`ignored an invalid instruction: ${invalid}`);
    if (answer.heartbeatTimeoutMs !== null && this.joined) {
      const timeout = clampTimeout(answer.heartbeatTimeoutMs);
      if (timeout !== this.joined.heartbeatTimeoutMs) {
        this.log(`the coordinator's failure timeout is now ${timeout} ms (was ${this.joined.heartbeatTimeoutMs} ms)`);
        this.joined = { ...this.joined, heartbeatTimeoutMs: timeout };
      }
    }
    for (const [i, instruction] of instructions.entries()) {
      if (firstSeq !== null) {
        // Numbered: the coordinator repeats what we have not acknowledged, and answers may cross; take each once.
        const seq = firstSeq + i;
        if (seq <= this.lastSeq) continue;
        this.lastSeq = seq;
      }
      if (instruction === null) continue;
      this.instructionChain = this.instructionChain
        .then(() => (session === this.session ? this.obey(instruction, session) : undefined))
        .catch((error: unknown) => this.log(`could not carry out ${instruction.kind}: ${error instanceof Error ? error.message : String(error)}`));
    }
    return true;
  }

  private async obey(instruction: Instruction, session: number): Promise<void> {
    switch (instruction.kind) {
      case 'start': {
        const { plan } = instruction;
        const run = this.current;
        if (run && run.plan.runId === plan.runId && run.plan.generation === plan.generation) return; // already running it
        this.log(`instruction: start run ${plan.runId} generation ${plan.generation} (${plan.launcher}, nnodes ${plan.nnodes}, shard ${plan.env.GPU_SHARE_SHARD_START ?? '?'}..${plan.env.GPU_SHARE_SHARD_END ?? '?'})`);
        if (run) await this.stopRun(`replaced by generation ${plan.generation}`);
        if (session !== this.session) return;
        this.launch(plan, session);
        return;
      }
      case 'stop': {
        const run = this.current;
        if (!run || run.plan.runId !== instruction.runId || run.plan.generation > instruction.generation) return;
        this.log(`instruction: stop run ${instruction.runId} generation ${instruction.generation} (${instruction.reason})`);
        await this.stopRun(instruction.reason);
        return;
      }
      case 'drain':
        this.log(`instruction: drain (${instruction.reason})`);
        await this.finish('drained', instruction.reason);
        return;
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Training processes

  private launch(plan: LaunchPlan, session: number): void {
    const run: CurrentRun = { plan, proc: null, stopRequested: false, ranks: new Map(), residencyStarted: false, residencyTimer: null, session };
    this.current = run;
    this.lastProgress = null;
    const ids = { runId: plan.runId, generation: plan.generation };
    const fail = (message: string): void => {
      this.log(`run ${plan.runId} generation ${plan.generation} could not start: ${message}`);
      this.reports.push({ type: 'output', ...ids, data: `gpu-share worker ${this.node}: ${message}\r\n` });
      this.reports.push({ type: 'exited', ...ids, exitCode: 127, signal: null, requested: false });
      if (this.current === run) this.current = null;
    };

    const runDir = safeSegment(plan.runId);
    const checkpointDir = path.join(this.opts.dataDir, 'checkpoints', runDir);
    const logDir = path.join(this.opts.dataDir, 'logs', runDir, `g${plan.generation}`);
    const workDir = this.opts.workDir ?? process.cwd();
    let argv: string[];
    let launcherEnv: Record<string, string>;
    try {
      mkdirSync(checkpointDir, { recursive: true });
      mkdirSync(logDir, { recursive: true });
      const script = resolveScript(plan.command[0]!, { workDir, assetsDir: () => findAssetsDir(this.env) });
      if (script.note) this.log(script.note);
      const resolvedPlan: LaunchPlan = { ...plan, command: [script.path, ...plan.command.slice(1)] };
      const gpus = plan.useGpus ? this.usableGpus() : [];
      const built = buildLaunchCommand(resolvedPlan, this.python, { gpuCount: gpus.length, logDir, assetsDir: findAssetsDir(this.env), inheritedEnv: this.env });
      for (const note of built.notes) this.log(`run ${plan.runId}: ${note}`);
      argv = built.argv;
      launcherEnv = built.env;
      const env = buildTrainingEnv({
        inherited: this.env,
        planEnv: plan.env,
        launcherEnv,
        checkpointDir,
        gpuUuids: gpus.map((g) => g.uuid ?? String(g.index)),
      });
      run.proc = new TrainingProcess({
        pty: this.opts.pty,
        argv,
        env,
        cwd: workDir,
        clock: this.clock,
        onOutput: (data) => {
          if (run.session === this.session) this.reports.push({ type: 'output', ...ids, data });
          this.opts.onOutput?.(data);
        },
        onProgress: (line) => this.onProgress(run, line),
      });
    } catch (error) {
      fail(error instanceof Error ? error.message : String(error));
      return;
    }
    const proc = run.proc;
    this.log(`started run ${plan.runId} generation ${plan.generation}: pid ${proc.pid}: ${argv.join(' ')}`);
    this.reports.push({ type: 'started', ...ids, pid: proc.pid });
    if (plan.useGpus) {
      run.residencyTimer = this.clock.setTimeout(() => this.beginResidencyProbe(run), this.opts.residencyStartWindowMs ?? RESIDENCY_START_WINDOW_MS);
    }
    void proc.exited.then((exit) => this.onRunExit(run, exit));
  }

  private onProgress(run: CurrentRun, line: TrainerProgressLine): void {
    if (this.current !== run) return;
    run.ranks.set(line.rank ?? 0, line);
    let total = 0;
    let any = false;
    for (const r of run.ranks.values()) {
      if (r.samplesPerSec !== null) {
        total += r.samplesPerSec;
        any = true;
      }
    }
    this.lastProgress = {
      runId: run.plan.runId,
      generation: run.plan.generation,
      step: line.step,
      loss: line.loss,
      samplesPerSec: any ? total : null,
      resumedFrom: line.resumedFrom,
    };
    if (run.plan.useGpus && !run.residencyStarted) this.beginResidencyProbe(run);
  }

  private beginResidencyProbe(run: CurrentRun): void {
    if (run.residencyStarted || !run.proc) return;
    run.residencyStarted = true;
    run.residencyTimer?.cancel();
    void residencyReport(run.plan, run.proc.pid, this.opts.probeResidency ?? probeResidency, this.env).then((report) => {
      this.log(`residency of run ${run.plan.runId} generation ${run.plan.generation}: ${report.detail}`);
      if (run.session === this.session) this.reports.push(report);
    });
  }

  private onRunExit(run: CurrentRun, exit: ProcessExit): void {
    run.residencyTimer?.cancel();
    const { runId, generation } = run.plan;
    this.log(`run ${runId} generation ${generation} ${describeExit(exit)}${run.stopRequested ? ' (stopped as asked)' : ''}`);
    if (run.session === this.session) {
      // The last steps ran after the previous heartbeat: send them before the exit, or a finished run would
      // show the step of that heartbeat instead of its real final step.
      const finalBeat = this.phase === 'joined' ? this.heartbeat().catch(() => undefined) : Promise.resolve();
      void finalBeat.then(() => {
        if (run.session !== this.session) return;
        this.reports.push({ type: 'exited', runId, generation, exitCode: exit.exitCode, signal: exit.signal, requested: run.stopRequested });
        void this.flushReports();
      });
    }
    if (this.current === run) this.current = null;
  }

  /** Stops the current run as the coordinator asked; resolves when its whole process group is gone. */
  private async stopRun(reason: string): Promise<void> {
    const run = this.current;
    if (!run?.proc) return;
    run.stopRequested = true;
    if (!run.proc.hasExited) this.log(`stopping run ${run.plan.runId} generation ${run.plan.generation}: ${reason}`);
    await run.proc.stop(this.stopGraceMs);
  }

  // -------------------------------------------------------------------------------------------------------
  // Reports and the end

  private async flushReports(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.phase !== 'joined' && this.phase !== 'stopping') return;
    if (!this.joined || this.reports.isEmpty()) return;
    const joined = this.joined;
    const session = this.session;
    const batch = this.reports.nextBatch();
    if (!batch) return;
    this.flushing = (async () => {
      const reply = await this.client.post(apiPaths.report(joined.workerId), { incarnation: joined.incarnation, reports: batch.reports, batchSeq: batch.seq });
      if (session !== this.session) return;
      if (reply.kind === 'ok') {
        this.reports.settle(batch);
        return;
      }
      if (reply.kind !== 'http-error' || reply.status >= 500) {
        // Kept for the next try, with the same number: the coordinator may have taken it and only the answer was lost.
        return;
      }
      if (reply.status === 409 || reply.status === 404 || reply.status === 401) {
        this.becomeLost(`the coordinator refused our reports (${reply.status}: ${reply.message})`);
      } else {
        this.reports.settle(batch);
        this.log(`the coordinator rejected ${batch.reports.length} report(s) (${reply.status}: ${reply.message}); dropped them`);
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private finish(reason: AgentExit['reason'], detail: string): Promise<void> {
    if (this.stopping) return this.stopping;
    this.stopping = (async () => {
      const wasJoined = this.phase === 'joined';
      this.phase = 'stopping';
      this.heartbeatTimer?.cancel();
      this.watchdog?.cancel();
      this.wakeJoinRetry?.();
      const run = this.current;
      if (run?.proc && !run.proc.hasExited) {
        run.stopRequested = true;
        this.log(`stopping run ${run.plan.runId} generation ${run.plan.generation}: ${detail}`);
        await run.proc.stop(this.stopGraceMs);
      }
      if (wasJoined && this.joined) {
        await this.flushing;
        await this.flushReports();
        // The deathrattle first: the coordinator learns of the leave even if the POST below is lost.
        await this.presence?.close(detail);
        const reply = await this.client.post(apiPaths.leave(this.joined.workerId), { incarnation: this.joined.incarnation, reason: detail.slice(0, 500) }, 2000);
        if (reply.kind !== 'ok') this.log(`could not say goodbye to the coordinator: ${describeFailure(reply)}`);
      }
      await this.presence?.close(detail);
      this.flushTimer?.cancel();
      this.client.close();
      this.phase = 'stopped';
      this.log(reason === 'drained' ? `drained: ${detail}` : `stopped: ${detail}`);
      this.resolveExit({ reason, detail });
    })();
    return this.stopping;
  }
}
