/**
 * The training processes the agent runs: one per run (a machine with several GPUs may be a member of several
 * runs, each on its own GPUs; the coordinator keeps their GPU sets apart: src-shared/scheduling/run-fit.ts).
 * Each is started from a launch plan in a pty, its output and progress lines passed on, its GPU residency probed
 * once it is under way, and stopped (SIGTERM to its whole process group, SIGKILL after the grace) when the
 * coordinator asks, a newer generation of the same run replaces it, or the coordinator is lost. Each carries the
 * session number it was started under, so the agent can drop what an old session's run still says.
 *
 * The warm launcher is one per agent: the first launch after a standby is ready takes it, a launch meanwhile (a
 * second run's) starts cold — a standby per run would import torch once more per run for every relaunch, on a
 * machine whose GPUs already train, for a saving only relaunches see.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DetectedGpu } from '../../src-shared/hardware';
import type { LaunchPlan, Progress, Report } from '../../src-shared/worker-protocol';
import { findAssetsDir } from '../platform/assets-dir';
import { probeResidency, type ProbeResidencyOptions, type ResidencyResult } from '../platform/hardware/residency';
import type { Clock, PtySpawner } from '../platform/ports';
import { buildTrainingEnv } from '../platform/runs/child-env';
import type { TrainerProgressLine } from '../platform/runs/progress-line';
import type { ProgressPoint } from '../../src-shared/runs/progress-report';
import { COMM_CONTROL_ENV, COMM_CONTROL_FILE, commControlFile, type CommUpdateInstruction } from '../../src-shared/runs/comm-control';
import { buildLaunchCommand } from '../platform/runs/torchrun-command';
import { TrainingProcess, type ProcessExit } from '../platform/runs/training-process';
import { WarmLauncher, type LaunchPath } from '../platform/runs/warm-launcher';
import type { LaunchProjectResult } from './project/agent-projects';
import { residencyReport } from './residency-report';
import { resolveScript } from './resolve-script';

/** Residency is probed at the first progress line, or this long after the start if none comes. */
export const RESIDENCY_START_WINDOW_MS = 5000;

export interface TrainingSupervisorOptions {
  pty: PtySpawner;
  clock: Clock;
  log: (line: string) => void;
  /** Checkpoints (<dataDir>/checkpoints/<runId>) and torchrun's logs (<dataDir>/logs/<runId>/g<generation>). */
  dataDir: string;
  /** Where relative script paths resolve. */
  workDir: string;
  /** Environment training inherits (filtered). */
  env: NodeJS.ProcessEnv;
  /** The Python with torch found at start-up, if any. */
  python: () => { path: string; torchVersion: string } | null;
  /** GPUs a GPU run may be given. */
  gpus: () => DetectedGpu[];
  /** The node name, for the line a run that cannot start leaves in its output. */
  node: () => string;
  stopGraceMs: number;
  residencyStartWindowMs?: number;
  probeResidency?: (opts: ProbeResidencyOptions) => Promise<ResidencyResult>;
  /** A report about the run started under session `epoch`. */
  report: (report: Report, epoch: number) => void;
  /** Raw output as it arrives, whatever the session. */
  onOutput?: (data: string) => void;
  /** The run's process ended; `requested` when it was stopped on purpose. */
  onExit: (run: { runId: string; generation: number; epoch: number }, exit: ProcessExit, requested: boolean) => void;
  /** Keep a warm launcher (torch imported ahead) for torchrun launches (warm-launcher.ts); off: every launch cold. */
  warmLauncher?: boolean;
  /** How long after a standby is used its replacement starts (tests shorten it). */
  warmReplaceDelayMs?: number;
}

interface SupervisedRun {
  plan: LaunchPlan;
  /** The plan's project as readied on this member (null: none): its folder is the trainer's working directory. */
  project: LaunchProjectResult | null;
  epoch: number;
  proc: TrainingProcess | null;
  stopRequested: boolean;
  /** Latest progress line of each local rank, for the node's samples/s. */
  ranks: Map<number, TrainerProgressLine>;
  residencyStarted: boolean;
  residencyTimer: { cancel(): void } | null;
}

/** A progress line as a progress report's point: null fields left out, so batches stay small. */
function progressPoint(line: TrainerProgressLine): ProgressPoint {
  const point: ProgressPoint = { step: line.step };
  for (const key of Object.keys(line) as (keyof TrainerProgressLine)[]) {
    if (line[key] !== null) (point as unknown as Record<string, unknown>)[key] = line[key];
  }
  return point;
}

function describeLaunchPath(how: LaunchPath | null): string {
  if (how?.path === 'warm') return `launched warm: the standby launcher took it (pid ${how.pid}; ${how.ready ? 'torch already imported' : 'it starts once its torch import is done'})`;
  return `launched cold: ${how?.reason ?? 'no warm launcher'}`;
}

function safeSegment(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120) || 'run';
}

function describeExit(exit: ProcessExit): string {
  if (exit.signal !== null) return `killed by signal ${exit.signal}`;
  return `exited with code ${exit.exitCode}`;
}

/** Ended runs remembered for a re-attach claim (kept-training.ts); beyond this the oldest is forgotten. */
const LATEST_KEPT = 32;

export class TrainingSupervisor {
  /** The run going now, by run id. */
  private readonly current = new Map<string, SupervisedRun>();
  /** The latest generation launched of each run, kept after it ended (a re-attach claim names it: kept-training.ts). */
  private readonly latest = new Map<string, SupervisedRun>();
  /** The latest progress of each run going now that printed one; the last entry is the run that reported last. */
  private readonly progress = new Map<string, Progress>();
  private readonly warm: WarmLauncher | null;

  constructor(private readonly opts: TrainingSupervisorOptions) {
    this.warm = opts.warmLauncher && opts.env.GPU_SHARE_WARM_LAUNCHER !== '0' ? this.makeWarmLauncher() : null;
  }

  /** Starts the warm launcher's standby if there is none (once this machine's Python is known). */
  warmUp(): void {
    this.warm?.prime();
  }

  /** Ends the warm launcher's standby (the agent is stopping). */
  closeWarm(): void {
    this.warm?.close();
  }

  /** Every run going now, in launch order. */
  statuses(): { runId: string; generation: number; pid: number | null }[] {
    return [...this.current.values()].map((run) => ({ runId: run.plan.runId, generation: run.plan.generation, pid: run.proc?.pid ?? null }));
  }

  /** The latest progress of each run going now that printed one, the run that reported last at the end. */
  runProgress(): Progress[] {
    return [...this.progress.values()];
  }

  /**
   * What a heartbeat says of training: `runs`, each run's progress, when it trains several, and `progress`, the
   * run that reported last (an older coordinator reads that alone). A run that ended is in neither.
   */
  beat(): { progress: Progress | null; runs?: Progress[] } {
    const runs = this.runProgress();
    return { progress: runs.at(-1) ?? null, ...(runs.length > 1 ? { runs } : {}) };
  }

  /** Whether `plan`'s generation is the one running now (a repeated start is not started twice). */
  isRunning(plan: Pick<LaunchPlan, 'runId' | 'generation'>): boolean {
    return this.current.get(plan.runId)?.plan.generation === plan.generation;
  }

  /**
   * A changed local-SGD period for the running generation: written to its comm control file (temp file + rename,
   * so a trainer never reads half of it), which the trainer reads at its next average. Returns what was done, for
   * the log; a change for another generation than the one running is ignored.
   */
  commUpdate(u: CommUpdateInstruction): string {
    const run = this.current.get(u.runId);
    if (!run || run.plan.generation !== u.generation) return `comm update for run ${u.runId} generation ${u.generation} ignored: that generation is not running here`;
    const file = this.commControlPath(u.runId, u.generation);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(`${file}.tmp`, `${JSON.stringify(commControlFile(u))}\n`);
    renameSync(`${file}.tmp`, file);
    return `run ${u.runId} generation ${u.generation}: local-sgd every ${u.localSgdPeriod} steps from the next average (${u.reason})`;
  }

  private commControlPath(runId: string, generation: number): string {
    return path.join(this.opts.dataDir, 'control', safeSegment(runId), `g${generation}`, COMM_CONTROL_FILE);
  }

  /** Whether a stop for this run and generation applies to what runs now (not to a newer generation). */
  isStoppable(runId: string, generation: number): boolean {
    const run = this.current.get(runId);
    return run !== undefined && run.plan.generation <= generation;
  }

  /**
   * Starts `plan` under session `epoch` beside the other runs' trainings; a plan that cannot start is reported as
   * an exit with code 127. The caller stops an older generation of the same run first (isRunningRun).
   */
  launch(plan: LaunchPlan, epoch: number, project: LaunchProjectResult | null = null): void {
    const run: SupervisedRun = { plan, project, epoch, proc: null, stopRequested: false, ranks: new Map(), residencyStarted: false, residencyTimer: null };
    this.current.set(plan.runId, run);
    this.latest.delete(plan.runId);
    this.latest.set(plan.runId, run);
    for (const [id, old] of this.latest) {
      if (this.latest.size <= LATEST_KEPT) break;
      if (!this.current.has(id) && old !== run) this.latest.delete(id);
    }
    this.progress.delete(plan.runId);
    const ids = { runId: plan.runId, generation: plan.generation };
    try {
      run.proc = this.spawn(run);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.opts.log(`run ${plan.runId} generation ${plan.generation} could not start: ${message}`);
      this.opts.report({ type: 'output', ...ids, data: `gpu-share worker ${this.opts.node()}: ${message}\r\n` }, epoch);
      this.opts.report({ type: 'exited', ...ids, exitCode: 127, signal: null, requested: false }, epoch);
      if (this.current.get(plan.runId) === run) this.current.delete(plan.runId);
      return;
    }
    const proc = run.proc;
    this.opts.report({ type: 'started', ...ids, pid: proc.pid }, epoch);
    if (plan.useGpus) {
      run.residencyTimer = this.opts.clock.setTimeout(() => this.beginResidencyProbe(run), this.opts.residencyStartWindowMs ?? RESIDENCY_START_WINDOW_MS);
    }
    void proc.exited.then((exit) => this.onRunExit(run, exit));
  }

  /** Whether a generation of `runId` runs now. */
  isRunningRun(runId: string): boolean {
    return this.current.has(runId);
  }

  /** Stops run `runId` on purpose (left out: every run); resolves when its whole process group is gone. */
  async stop(reason: string, runId?: string): Promise<void> {
    const runs = runId === undefined ? [...this.current.values()] : [this.current.get(runId)].filter((r) => r !== undefined);
    await Promise.all(
      runs.map(async (run) => {
        if (!run.proc) return;
        run.stopRequested = true;
        if (!run.proc.hasExited) this.opts.log(`stopping run ${run.plan.runId} generation ${run.plan.generation}: ${reason}`);
        await run.proc.stop(this.opts.stopGraceMs);
      }),
    );
  }

  /** The coordinator is lost: stop every training, not as asked (it failed under us). Resolves at once. */
  abandon(): void {
    for (const run of this.current.values()) if (run.proc) void run.proc.stop(this.opts.stopGraceMs);
  }

  /** The latest generation launched of each run, ended or not, with the session it belongs to; oldest launch first. */
  launched(): { runId: string; generation: number; epoch: number; running: boolean }[] {
    return [...this.latest.values()].map((run) => ({ runId: run.plan.runId, generation: run.plan.generation, epoch: run.epoch, running: this.current.get(run.plan.runId) === run }));
  }

  /**
   * The current run goes on under session `epoch`: the coordinator restarted and the agent kept its training
   * (agent-session.ts), so what it says from now on belongs to the new session — buffered while the coordinator
   * is away, sent after the re-attach.
   */
  adopt(epoch: number): void {
    for (const run of this.current.values()) run.epoch = epoch;
  }

  /** SIGKILLs every training group at once (a second Ctrl-C). */
  abort(): void {
    for (const run of this.current.values()) {
      if (run.proc && !run.proc.hasExited) {
        run.stopRequested = true;
        void run.proc.kill();
      }
    }
  }

  /** Resolves once no training process is left running. */
  async gone(): Promise<void> {
    await Promise.all([...this.current.values()].map((run) => (run.proc && !run.proc.hasExited ? run.proc.exited : undefined)));
  }

  /** One line naming the runs going now, for the log when the coordinator is lost ('' when none). */
  describeCurrent(): string {
    return [...this.current.values()].map((run) => `run ${run.plan.runId} generation ${run.plan.generation}`).join(' and ');
  }

  private makeWarmLauncher(): WarmLauncher {
    const { env: inherited } = this.opts;
    return new WarmLauncher({
      pty: this.opts.pty,
      clock: this.opts.clock,
      log: this.opts.log,
      python: this.opts.python,
      assetsDir: () => findAssetsDir(inherited),
      env: () => buildTrainingEnv({ inherited, planEnv: {}, checkpointDir: '', gpuUuids: [] }),
      cwd: this.opts.workDir,
      ...(this.opts.warmReplaceDelayMs !== undefined ? { replaceDelayMs: this.opts.warmReplaceDelayMs } : {}),
    });
  }

  private spawn(run: SupervisedRun): TrainingProcess {
    const { plan } = run;
    const runDir = safeSegment(plan.runId);
    const checkpointDir = path.join(this.opts.dataDir, 'checkpoints', runDir);
    const logDir = path.join(this.opts.dataDir, 'logs', runDir, `g${plan.generation}`);
    const { env: inherited } = this.opts;
    if (run.project && 'error' in run.project) throw new Error(run.project.error);
    const workDir = run.project?.cwd ?? this.opts.workDir; // a project's script is relative to its snapshot's folder
    mkdirSync(checkpointDir, { recursive: true });
    mkdirSync(logDir, { recursive: true });
    const script = resolveScript(plan.command[0]!, { workDir, assetsDir: () => findAssetsDir(inherited) });
    if (script.note) this.opts.log(script.note);
    const resolvedPlan: LaunchPlan = { ...plan, command: [script.path, ...plan.command.slice(1)] };
    // The GPUs the coordinator gave this member (plan.gpuIndices: positions in the GPUs this agent joined with, as a
    // job's gpuIndex is); an older coordinator's plan names none: all of them.
    const gpus = plan.useGpus ? this.opts.gpus().filter((_, i) => !plan.gpuIndices || plan.gpuIndices.includes(i)) : [];
    const built = buildLaunchCommand(resolvedPlan, this.opts.python(), { gpuCount: gpus.length, logDir, assetsDir: findAssetsDir(inherited), inheritedEnv: inherited });
    for (const note of built.notes) this.opts.log(`run ${plan.runId}: ${note}`);
    const projectEnv = run.project?.env ?? {};
    const env = buildTrainingEnv({ inherited, planEnv: plan.env, launcherEnv: built.env, projectEnv, checkpointDir, gpuUuids: gpus.map((g) => g.uuid ?? String(g.index)) });
    env[COMM_CONTROL_ENV] = this.commControlPath(plan.runId, plan.generation);
    let how: LaunchPath | null = null;
    const warm = this.warm;
    const pty: PtySpawner = warm
      ? {
          spawn: (file, args, options) => {
            const spawned = warm.spawn(file, args, options);
            how = spawned.how;
            return spawned.proc;
          },
        }
      : this.opts.pty;
    const proc = new TrainingProcess({
      pty,
      argv: built.argv,
      env,
      cwd: workDir,
      clock: this.opts.clock,
      onOutput: (data) => {
        // Its progress lines go parsed, as progress reports (onProgress): the coordinator need not re-read them.
        this.opts.report({ type: 'output', runId: plan.runId, generation: plan.generation, data, progressSent: true }, run.epoch);
        this.opts.onOutput?.(data);
      },
      onProgress: (line) => this.onProgress(run, line),
    });
    this.opts.log(`started run ${plan.runId} generation ${plan.generation}: pid ${proc.pid}: ${built.argv.join(' ')}`);
    if (warm) this.opts.log(`run ${plan.runId} generation ${plan.generation} ${describeLaunchPath(how)}`);
    return proc;
  }

  private onProgress(run: SupervisedRun, line: TrainerProgressLine): void {
    // Every line, for the loss curve (as its output goes, even once a newer generation runs); the report queue
    // merges them into few entries per flush.
    this.opts.report({ type: 'progress', runId: run.plan.runId, generation: run.plan.generation, points: [progressPoint(line)] }, run.epoch);
    if (this.current.get(run.plan.runId) !== run) return;
    run.ranks.set(line.rank ?? 0, line);
    let total = 0;
    let any = false;
    for (const r of run.ranks.values()) {
      if (r.samplesPerSec !== null) {
        total += r.samplesPerSec;
        any = true;
      }
    }
    this.progress.delete(run.plan.runId); // re-inserted last: the heartbeat's `progress` is the run that reported last
    this.progress.set(run.plan.runId, {
      runId: run.plan.runId,
      generation: run.plan.generation,
      step: line.step,
      loss: line.loss,
      samplesPerSec: any ? total : null,
      resumedFrom: line.resumedFrom,
      totalSteps: line.totalSteps || null,
    });
    if (run.plan.useGpus && !run.residencyStarted) this.beginResidencyProbe(run);
  }

  private beginResidencyProbe(run: SupervisedRun): void {
    if (run.residencyStarted || !run.proc) return;
    run.residencyStarted = true;
    run.residencyTimer?.cancel();
    void residencyReport(run.plan, run.proc.pid, this.opts.probeResidency ?? probeResidency, this.opts.env).then((report) => {
      this.opts.log(`residency of run ${run.plan.runId} generation ${run.plan.generation}: ${report.detail}`);
      this.opts.report(report, run.epoch);
    });
  }

  private onRunExit(run: SupervisedRun, exit: ProcessExit): void {
    run.residencyTimer?.cancel();
    const { runId, generation } = run.plan;
    this.opts.log(`run ${runId} generation ${generation} ${describeExit(exit)}${run.stopRequested ? ' (stopped as asked)' : ''}`);
    // Still current and with its progress while onExit runs: the agent's final heartbeat carries its last step.
    this.opts.onExit({ runId, generation, epoch: run.epoch }, exit, run.stopRequested);
    if (this.current.get(runId) !== run) return;
    this.current.delete(runId);
    this.progress.delete(runId);
  }
}
