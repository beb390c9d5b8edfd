/**
 * The worker agent: joins a coordinator, heartbeats, and runs what it is told in a pty. It is the same code
 * as a standalone OS process (`gpu-share worker`) and inside the desktop app (the app's own machine).
 * Its one hard promise is "no orphans": training never outlives the agent's link to the coordinator for longer
 * than the coordinator allows. Declared failed (a refusal under the epoch it joined), the agent kills its training
 * and joins again as a new incarnation; a coordinator that went silent or came back under a new epoch may only have
 * restarted, so the training is kept until a claim for it is refused or the failover grace passes (kept-training.ts).
 * It trains one run per GPU set. What the coordinator sends is parsed before use; a bad instruction is logged and
 * ignored. Besides heartbeats it holds a presence WebSocket (presence-link.ts), so the coordinator learns of its
 * death at once; every request after the join carries the session's secret. This file wires the pieces: the join
 * session (agent-session.ts), the beat (heartbeat-loop.ts), the instructions (instruction-inbox.ts), the training
 * (training-supervisor.ts), a run's project (project/agent-projects.ts) and the reports (report-sender.ts).
 */
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import type { Instruction, JoinResponse, Report } from '../../src-shared/worker-protocol';
import { detectHardware } from '../platform/hardware/detect-hardware';
import { ResourceSampler } from './resource-sampler';
import { systemClock, type Clock } from '../platform/ports';
import { findPython } from '../platform/runs/python-finder';
import { DEFAULT_STOP_GRACE_MS, type ProcessExit } from '../platform/runs/training-process';
import { AgentSession } from './agent-session';
import { CoordinatorClient, describeFailure, findFreePorts } from './coordinator-client';
import { readHeartbeatAnswer } from './heartbeat-answer';
import { HeartbeatLoop } from './heartbeat-loop';
import { InstructionInbox } from './instruction-inbox';
import { JobRunner } from './job-runner';
import { jobTransport } from './job-transport';
import { KeptTraining } from './kept-training';
import { AgentLinkProbes } from './link-probes';
import { JOB_STOP_GRACE_MS } from './job-attempt';
import { buildJoinRequest, JoinError, joinOnce, nodeNameFrom, retryJoin, usableGpus, type MachineFacts } from './join-coordinator';
import { loadOrCreateMachineId } from './machine-id';
import { loadOrCreateNodeIdentity } from './node-identity';
import { PresenceLink, presenceUrl } from './presence-link';
import { AgentProjects, DEFAULT_PROJECT_CACHE_BYTES, projectTransport } from './project/agent-projects';
import { ReportSender } from './report-sender';
import { TrainingSupervisor } from './training-supervisor';
import type { AgentExit, AgentPhase, AgentStatus, WorkerAgentOptions } from './worker-agent-options';
export { lostAfterMs } from './agent-session';
export { JoinError } from './join-coordinator';
export type { AgentExit, AgentPhase, AgentStatus, WorkerAgentOptions } from './worker-agent-options';
/** The agent's own life; while 'running', its phase is the session's (joined or lost). */
type Lifecycle = 'idle' | 'joining' | 'running' | 'stopping' | 'stopped';

export class WorkerAgent {
  private readonly opts: WorkerAgentOptions;
  private readonly clock: Clock;
  private readonly client: CoordinatorClient;
  private readonly env: NodeJS.ProcessEnv;
  private readonly log: (line: string) => void;
  private readonly session: AgentSession;
  private readonly inbox: InstructionInbox;
  private readonly training: TrainingSupervisor;
  private readonly jobs: JobRunner; // adapter jobs, beside the training (job-runner.ts)
  private readonly reports: ReportSender;
  private readonly beats: HeartbeatLoop;
  private readonly kept: KeptTraining; // training kept through a coordinator restart, and its re-attach claim
  private readonly links: AgentLinkProbes; // link probe server and measurements (link-probes.ts)
  private readonly projects: AgentProjects; // a run's project: prepare, launch, result (project/agent-projects.ts)
  private readonly resources = new ResourceSampler({ hardware: () => this.facts?.hardware ?? null, env: () => this.env }); // CPU/RAM/GPU for heartbeats

  private lifecycle: Lifecycle = 'idle';
  private node: string;
  private facts: MachineFacts | null = null;
  private presence: PresenceLink | null = null;
  private wakeJoinRetry: (() => void) | null = null; // ends the first join's wait between tries (stop() need not wait 30 s)
  private watchdog: { cancel(): void } | null = null;

  private resolveExit!: (exit: AgentExit) => void;
  /** Resolves when the agent has stopped for good: stop() was called or the coordinator drained it. */
  readonly exited: Promise<AgentExit>;
  private stopping: Promise<void> | null = null;
  constructor(opts: WorkerAgentOptions) {
    this.opts = opts;
    const clock = (this.clock = opts.clock ?? systemClock);
    this.client = new CoordinatorClient(opts.coordinatorUrl, opts.token, opts.certSha256 ? { certSha256: opts.certSha256 } : {});
    this.env = opts.env ?? process.env;
    const log = (this.log = opts.log ?? (() => undefined));
    this.node = opts.name ?? nodeNameFrom(os.hostname());
    this.exited = new Promise((resolve) => (this.resolveExit = resolve));
    this.session = new AgentSession({
      clock,
      log,
      join: () => this.join(),
      onJoined: (joined, again) => this.onJoined(joined, again),
      onLost: (why, kept) => this.onLost(why, kept),
      onKeptGivenUp: (why) => this.kept.givenUp(why),
      quiesce: () => this.training.gone(),
    });
    this.inbox = new InstructionInbox({ obey: (instruction, epoch) => this.obey(instruction, epoch), epoch: () => this.session.epoch, log });
    // What training and jobs both run with: this machine's pty, folders, environment, Python and GPUs.
    const processes = {
      pty: opts.pty,
      clock,
      log,
      dataDir: opts.dataDir,
      workDir: opts.workDir ?? process.cwd(),
      env: this.env,
      python: () => this.facts?.python ?? null,
      gpus: () => usableGpus(this.facts?.hardware ?? null),
    };
    this.training = new TrainingSupervisor({
      ...processes,
      node: () => this.node,
      stopGraceMs: opts.stopGraceMs ?? DEFAULT_STOP_GRACE_MS,
      warmLauncher: opts.warmLauncher ?? false,
      residencyStartWindowMs: opts.residencyStartWindowMs,
      probeResidency: opts.probeResidency,
      onOutput: opts.onOutput,
      report: (report, epoch) => this.report(report, epoch),
      onExit: (run, exit, requested) => this.onRunExit(run, exit, requested),
    });
    this.jobs = new JobRunner({
      ...processes,
      nvidiaSmiPath: () => (this.facts?.hardware.nvidia.available ? this.facts.hardware.nvidia.path : null), stopGraceMs: opts.stopGraceMs ?? JOB_STOP_GRACE_MS,
      ...jobTransport(this.client, () => this.session.joined),
      project: { ready: (job, project) => this.projects.readyJob(job, project), release: (job) => this.projects.releaseJob(job) }, // its snapshot, as a run's
    });
    this.reports = new ReportSender({
      clock,
      log,
      send: (batch) => {
        const joined = this.session.joined!;
        return this.client.call('report', [joined.workerId], { incarnation: joined.incarnation, reports: batch.reports, batchSeq: batch.seq });
      },
      ready: () => this.session.joined !== null && (this.session.phase === 'joined' || this.lifecycle === 'stopping'),
      epoch: () => this.session.epoch,
      onRefused: (why, epoch) => this.session.lose(why, epoch ? { refusedBy: epoch } : {}),
    });
    // While lost, the beat is a try at joining again, paced by the session's backoff.
    this.beats = new HeartbeatLoop({ clock, log, intervalMs: () => (this.session.phase === 'lost' ? this.session.retryDelayMs : (this.session.joined?.heartbeatIntervalMs ?? 1000)), beat: () => this.beat() });
    this.kept = new KeptTraining({ session: this.session, training: this.training, reports: this.reports, beats: () => this.beats, log });
    this.links = new AgentLinkProbes({ log });
    const projectOpts = { dataDir: opts.dataDir, cacheBytes: opts.projectCacheBytes ?? DEFAULT_PROJECT_CACHE_BYTES, clock, log, env: this.env };
    this.projects = new AgentProjects({ ...projectOpts, python: () => this.facts?.python?.path ?? null, ...projectTransport(this.client, () => this.session.joined) });
  }

  /** Registers a listener for the agent's end (stop or drain). */
  onExit(listener: (exit: AgentExit) => void): void {
    void this.exited.then(listener);
  }

  status(): AgentStatus {
    const joined = this.session.joined;
    return {
      phase: this.phase(),
      node: this.node,
      workerId: joined?.workerId ?? null,
      incarnation: joined?.incarnation ?? null,
      coordinatorUrl: this.client.base.href,
      runs: this.training.statuses(),
      progress: this.training.runProgress(),
    };
  }

  /** Detects this machine, joins, and starts heartbeating; rejects with a JoinError a person can act on. */
  async start(): Promise<JoinResponse> {
    if (this.lifecycle !== 'idle') throw new Error(`the agent was already started (it is ${this.phase()})`);
    this.lifecycle = 'joining';
    try {
      mkdirSync(this.opts.dataDir, { recursive: true });
      const problem = this.client.trustProblem();
      if (problem) throw new JoinError('untrusted', problem); // before anything else, the token least of all, is sent
      const machineId = loadOrCreateMachineId(this.opts.dataDir);
      // Signs every request from the join on; a data folder copied from another machine is refused here.
      const identity = loadOrCreateNodeIdentity(this.opts.dataDir);
      this.client.useIdentity(identity);
      this.log(`node key ${identity.fingerprint}`);
      const detect = this.opts.detect ?? (() => detectHardware({ env: this.env }));
      const find = this.opts.findPython ?? findPython;
      const [hardware, python, probePort, blobPort] = await Promise.all([detect(), find(this.env), this.links.listen(), this.projects.listen()]);
      const rdzvPorts = await findFreePorts(usableGpus(hardware).length); // a store port per GPU: one run per GPU set
      this.facts = { hardware, python, rdzvPort: rdzvPorts[0]!, rdzvPorts, machineId, probePort, blobPort };
      if (!this.opts.name && hardware.hostname) this.node = nodeNameFrom(hardware.hostname);
      if (!python) this.log('no Python with PyTorch found: only runs with the direct launcher can start here (set GPU_SHARE_PYTHON to fix)');
      this.training.warmUp();
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
        await this.client.call('leave', [joined.workerId], { incarnation: joined.incarnation, reason: 'stopped while joining' }, 2000);
        return joined;
      }
      this.lifecycle = 'running';
      this.session.begin(joined, false);
      this.beats.start(joined.heartbeatIntervalMs);
      this.watchdog = this.clock.setInterval(() => this.session.check(), Math.max(50, Math.min(500, Math.floor(joined.heartbeatTimeoutMs / 10))));
      this.reports.start();
      return joined;
    } catch (error) {
      this.lifecycle = 'stopped';
      void this.links.close();
      this.projects.close(); // its blob server would keep a refused worker's process alive
      this.training.closeWarm();
      this.resolveExit({ reason: 'stopped', detail: error instanceof Error ? error.message : String(error) });
      throw error;
    }
  }

  /** Stops training (SIGTERM, then SIGKILL after the grace), says goodbye to the coordinator, and ends. */
  stop(reason = 'stopped'): Promise<void> {
    return this.finish('stopped', reason);
  }

  /** SIGKILLs every training group and every job's at once (a second Ctrl-C); stop() still has to be awaited. */
  abort(): void {
    this.training.abort();
    this.jobs.abort();
  }

  private phase(): AgentPhase {
    if (this.lifecycle !== 'running') return this.lifecycle;
    return this.session.phase === 'lost' ? 'lost' : 'joined';
  }

  // --- The session: joining, heartbeats, loss ---
  private async join(): Promise<JoinResponse> {
    const facts = this.facts!;
    const who = (advertiseHost: string) => ({ node: this.node, advertiseHost, local: this.opts.local ?? false });
    // The re-attach claim (kept-training.ts) is signed with the rest of the join's body by the node key.
    const claim = this.kept.claim();
    const reattach = claim ? { reattach: claim } : {};
    return (await joinOnce(this.client, (host) => ({ ...buildJoinRequest(facts, who(host)), ...reattach }), this.opts.advertiseHost)).joined;
  }

  private onJoined(joined: JoinResponse, again: boolean): void {
    this.inbox.reset();
    const reattached = this.kept.joined(joined, again, this.client.base.origin);
    this.openPresence(joined);
    if (again) [this.jobs, this.projects.uploads].forEach((waiting) => waiting.retryNow()); // what waits to try again tries now
    const gpus = usableGpus(this.facts?.hardware ?? null).length;
    const torch = this.facts?.python ? `torch ${this.facts.python.torchVersion}` : 'no torch';
    if (reattached) return;
    const who = `worker ${joined.workerId} (incarnation ${joined.incarnation}), node ${this.node}`;
    this.log(`${again ? 'joined again' : 'joined'} ${this.client.base.origin} as ${who}, ${gpus} GPU${gpus === 1 ? '' : 's'}, ${torch}; heartbeat every ${joined.heartbeatIntervalMs} ms`);
  }

  /** The presence link of this session; the previous one was closed when the session was lost. */
  private openPresence(joined: JoinResponse): void {
    if (this.opts.presence === false) return;
    const epoch = this.session.epoch;
    const url = presenceUrl(this.client.base, joined.workerId);
    const link = new PresenceLink({
      url,
      headers: () => this.client.signedGetHeaders(url),
      connector: this.client.connector,
      heartbeatTimeoutMs: () => this.session.joined?.heartbeatTimeoutMs ?? joined.heartbeatTimeoutMs,
      onRefused: (reason) => {
        if (epoch === this.session.epoch) this.session.lose(`the coordinator ended this session (${reason})`);
      },
      onPoke: () => {
        // The coordinator has instructions waiting: heartbeat at once to fetch them.
        if (epoch === this.session.epoch && this.phase() === 'joined') this.beats.poke();
      },
      log: this.log,
      clock: this.clock,
    });
    this.presence = link;
    link.start();
  }

  private onLost(why: string, kept: boolean): void {
    void this.presence?.close('lost the coordinator');
    this.presence = null;
    this.kept.lost(why, kept);
  }

  private async beat(): Promise<void> {
    const phase = this.phase();
    if (phase === 'lost') await this.session.rejoin();
    else if (phase === 'joined') await this.heartbeat();
  }

  private async heartbeat(): Promise<void> {
    const joined = this.session.joined!;
    const epoch = this.session.epoch;
    // A hung request must not eat the whole timeout: give up on it halfway and try again.
    const timeoutMs = Math.max(200, Math.min(Math.floor(joined.heartbeatTimeoutMs / 2), 5000));
    const body = { incarnation: joined.incarnation, ...this.training.beat(), ack: this.inbox.ack, ...this.jobs.beat(), ...this.resources.beat(), ...this.projects.beat() };
    const reply = await this.client.call('heartbeat', [joined.workerId], body, timeoutMs);
    if (epoch !== this.session.epoch || this.phase() !== 'joined') return;
    if (reply.kind === 'ok') {
      // An answer that is not a heartbeat answer (a proxy's page) counts as a failed heartbeat.
      const answer = readHeartbeatAnswer(reply.body);
      if (answer.ok) {
        if (answer.heartbeatTimeoutMs !== null) this.session.followTimeout(answer.heartbeatTimeoutMs);
        this.inbox.take(answer, epoch);
        this.session.succeeded();
      } else {
        this.session.failed(answer.why);
      }
    } else if (reply.kind === 'http-error' && (reply.status === 409 || reply.status === 404 || reply.status === 401)) {
      // Under the join's epoch: declared failed, training stops. Under another: it restarted, training is kept.
      this.session.lose(`the coordinator no longer knows this session (${reply.status}: ${reply.message})`, reply.epoch ? { refusedBy: reply.epoch } : {});
      return;
    } else {
      this.session.failed(describeFailure(reply));
    }
    this.session.check();
  }

  // --- Instructions, training, reports ---
  private async obey(instruction: Instruction, epoch: number): Promise<void> {
    switch (instruction.kind) {
      case 'start': {
        const { plan } = instruction;
        if (this.training.isRunning(plan)) return; // already running it
        this.log(`instruction: start run ${plan.runId} generation ${plan.generation} (${plan.launcher}, nnodes ${plan.nnodes}, shard ${plan.env.GPU_SHARE_SHARD_START ?? '?'}..${plan.env.GPU_SHARE_SHARD_END ?? '?'})`);
        // An older generation of this run gives way; another run's training (its own GPUs) goes on beside it.
        if (this.training.isRunningRun(plan.runId)) await this.training.stop(`replaced by generation ${plan.generation}`, plan.runId);
        const project = await this.projects.launch(plan); // the snapshot and this member's data files, fetched if missing
        if (epoch !== this.session.epoch || this.stopping) return; // a drain on the agent's line may have come meanwhile
        this.training.launch(plan, epoch, project);
        return;
      }
      case 'stop': {
        if (!this.training.isStoppable(instruction.runId, instruction.generation)) return;
        this.log(`instruction: stop run ${instruction.runId} generation ${instruction.generation} (${instruction.reason})`);
        this.projects.stopping(instruction.runId, instruction.reason);
        await this.training.stop(instruction.reason, instruction.runId);
        return;
      }
      case 'drain':
        this.log(`instruction: drain (${instruction.reason})`);
        await this.finish('drained', instruction.reason);
        return;
      case 'runJob':
        return this.jobs.run(instruction.job);
      case 'serveSnapshot': // named as a peer for a snapshot its cache holds (project/agent-projects.ts)
        return this.projects.serve(instruction);
      case 'cancelJob': // not awaited: the grace of one job's stop must not hold up the instructions behind it
        return void this.jobs.cancel(instruction.jobId, instruction.token, instruction.reason);
      case 'prepare': // not awaited: a fetch must not hold the instructions behind it
        return void this.projects.prepare(instruction, (r) => this.report(r, epoch));
      case 'accept-link-probe':
      case 'measure-links':
        return this.links.obey(instruction, (r) => this.report(r, epoch));
      case 'comm-update': // a changed local-SGD period for the running trainer (src-shared/runs/comm-control.ts)
        return this.log(this.training.commUpdate(instruction));
    }
  }

  /** What a run says goes to the coordinator only while the session it was started under lasts. */
  private report(report: Report, epoch: number): void {
    if (epoch === this.session.epoch) this.reports.push(report);
  }

  private onRunExit(run: { runId: string; generation: number; epoch: number }, exit: ProcessExit, requested: boolean): void {
    void this.projects.ended(run.runId, exit, requested);
    if (run.epoch !== this.session.epoch) return;
    // The last steps ran after the previous heartbeat: send them before the exit (else a run shows a stale final step).
    const finalBeat = this.phase() === 'joined' ? this.heartbeat().catch(() => undefined) : Promise.resolve();
    void finalBeat.then(() => {
      // If that beat found the coordinator restarted, the claim names this run as ended: its exit goes to the next session.
      if (run.epoch !== this.session.epoch && !this.kept.carries(run)) return;
      this.reports.push({ type: 'exited', runId: run.runId, generation: run.generation, exitCode: exit.exitCode, signal: exit.signal, requested });
      void this.reports.flush();
    });
  }

  private finish(reason: AgentExit['reason'], detail: string): Promise<void> {
    if (this.stopping) return this.stopping;
    this.stopping = (async () => {
      const wasJoined = this.phase() === 'joined';
      this.lifecycle = 'stopping';
      this.session.end();
      this.beats.stop();
      this.watchdog?.cancel();
      this.wakeJoinRetry?.();
      await Promise.all([this.training.stop(detail), this.jobs.stopAll(detail)]);
      this.training.closeWarm();
      this.projects.close();
      const joined = this.session.joined;
      if (wasJoined && joined) {
        await this.reports.drain();
        // The deathrattle first: the coordinator learns of the leave even if the POST below is lost.
        await this.presence?.close(detail);
        const reply = await this.client.call('leave', [joined.workerId], { incarnation: joined.incarnation, reason: detail.slice(0, 500) }, 2000);
        if (reply.kind !== 'ok') this.log(`could not say goodbye to the coordinator: ${describeFailure(reply)}`);
      }
      await Promise.all([this.presence?.close(detail), this.links.close()]);
      this.reports.stop();
      this.client.close();
      this.lifecycle = 'stopped';
      this.log(reason === 'drained' ? `drained: ${detail}` : `stopped: ${detail}`);
      this.resolveExit({ reason, detail });
    })();
    return this.stopping;
  }
}
