/**
 * One attempt of one adapter job on this worker, from the runJob instruction to the coordinator's
 * acknowledgement of its end. It runs beside the elastic run's training and other jobs, in a pty of its own:
 *
 *   [its project's snapshot, fetched] → fresh folder <dataDir>/jobs/<jobId>/<attempt>/out → spawn (in the
 *   snapshot's folder when it has a project) → started, output, progress → exit
 *   → exit 0: pack out/ reproducibly, upload it, complete   |   otherwise: fail with the tail of the output
 *   → acknowledged: the folder is deleted and the attempt forgotten.
 *
 * The final calls wait out what may pass (no answer, 5xx, 401 while the agent joins again: the claim token
 * outlives the session) with a backoff; a 409/404 means the claim moved on (swept, cancelled, requeued), and
 * the attempt stops its process tree and is forgotten without another word.
 */
import { existsSync, mkdirSync, rmdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { CLAIM_TOKEN_HEADER, type JobLaunch } from '../../src-shared/jobs/job-protocol';
import type { JobProgress } from '../../src-shared/jobs/types';
import type { DetectedGpu } from '../../src-shared/hardware';
import { findAssetsDir } from '../platform/assets-dir';
import { packReproducibleTar } from '../platform/files/reproducible-tar';
import type { Clock, PtySpawner } from '../platform/ports';
import { filterInheritedEnv, trainerEnv } from '../platform/runs/child-env';
import { TrainingProcess, type ProcessExit } from '../platform/runs/training-process';
import { JobOutputSender, type JobReply } from './job-output';
import { resolveScript } from './resolve-script';

// JobReply is defined beside the output sender (job-output.ts), which this file uses: defined here, the two imported each other.
export type { JobReply };

/** The coordinator calls of one claim (job id and token already bound). */
export interface JobCalls {
  started(pid: number): Promise<JobReply>;
  output(data: string): Promise<JobReply>;
  upload(file: string, sha256: string, sizeBytes: number, headers: Record<string, string>): Promise<JobReply>;
  complete(artifactSha256: string, sizeBytes: number): Promise<JobReply>;
  fail(failure: { exitCode: number | null; signal: number | null; error: string; outputTail: string }): Promise<JobReply>;
}

export const JOB_STOP_GRACE_MS = 5000;
export const FINAL_CALL_BACKOFF = { firstMs: 1000, maxMs: 30_000 } as const;

/** What every job runs with on this worker (the runner's options too). */
export interface JobProcessOptions {
  pty: PtySpawner;
  clock: Clock;
  log: (line: string) => void;
  dataDir: string;
  workDir: string;
  env: NodeJS.ProcessEnv;
  python: () => { path: string } | null;
  /** The GPUs as the join listed them (for the UUID of a launch that gives only an index). */
  gpus: () => readonly DetectedGpu[];
  stopGraceMs: number;
  /** A job's project (project/agent-projects.ts): its snapshot fetched and unpacked here, and released at the end. */
  project?: JobProjectPort;
}

/** The agent's projects as an attempt uses them. */
export interface JobProjectPort {
  ready(job: { jobId: string; attempt: number; name: string }, project: NonNullable<JobLaunch['project']>): Promise<{ cwd: string; env: Record<string, string> } | { error: string }>;
  release(job: { jobId: string; attempt: number }): void;
}

export interface JobAttemptOptions extends JobProcessOptions {
  launch: JobLaunch;
  calls: JobCalls;
  /** The attempt is over (acknowledged, gone or stopped) and may be forgotten. */
  onDone: () => void;
}

type Phase = 'running' | 'finishing' | 'done';

/** The variable that hides or names the job's GPU: its UUID (stable across CUDA's orderings), else its index; "" hides every GPU. */
export function cudaVisibleDevices(launch: Pick<JobLaunch, 'gpuIndex' | 'gpuUuid'>, gpus: readonly DetectedGpu[]): string {
  if (launch.gpuIndex === null) return '';
  return launch.gpuUuid ?? gpus[launch.gpuIndex]?.uuid ?? String(launch.gpuIndex);
}

/**
 * The program to run: a `.py` goes through the worker's Python; a trainer named by a coordinator-side
 * …/trainers/x.py path or by its bare name is this worker's bundled copy when there is no such file here.
 */
export function jobArgv(command: readonly string[], where: { workDir: string; env: NodeJS.ProcessEnv; python: { path: string } | null }): string[] {
  const [first, ...rest] = command;
  if (first === undefined) throw new Error('the job has an empty command');
  if (!/\.py$/i.test(first)) return [first, ...rest];
  const assetsDir = () => findAssetsDir(where.env);
  let script = resolveScript(first, { workDir: where.workDir, assetsDir }).path;
  if (script === first && !/[\\/]/.test(first) && !existsSync(path.resolve(where.workDir, first))) script = bundledTrainer(first, assetsDir) ?? first;
  if (!where.python) throw new Error(`${first} is a Python script, and this worker found no Python with PyTorch (set GPU_SHARE_PYTHON to one)`);
  return [where.python.path, path.resolve(where.workDir, script), ...rest];
}

/** assets/trainers/<name> of this installation, when it exists. */
function bundledTrainer(name: string, assetsDir: () => string): string | null {
  try {
    const local = path.join(assetsDir(), 'trainers', name);
    return existsSync(local) ? local : null;
  } catch {
    return null; // no assets folder found: the name stays as given
  }
}

export class JobAttempt {
  readonly dir: string;
  readonly outDir: string;
  private proc: TrainingProcess | null = null;
  private readonly output: JobOutputSender;
  private phase: Phase = 'running';
  private stopRequested = false;
  private progressNow: JobProgress | null = null;
  /** Wakes the calls waiting out a backoff. */
  private readonly waiters = new Set<() => void>();

  constructor(private readonly opts: JobAttemptOptions) {
    const { jobId, attempt } = opts.launch;
    this.dir = path.join(opts.dataDir, 'jobs', jobId, String(attempt));
    this.outDir = path.join(this.dir, 'out');
    this.output = new JobOutputSender({ clock: opts.clock, send: (data) => opts.calls.output(data), onGone: (why) => void this.abandon(why), log: opts.log });
  }

  get jobId(): string {
    return this.opts.launch.jobId;
  }

  get token(): string {
    return this.opts.launch.token;
  }

  /** The pid of the job's process while it runs. */
  get pid(): number | null {
    return this.proc && !this.proc.hasExited ? this.proc.pid : null;
  }

  get onGpu(): boolean {
    return this.opts.launch.gpuIndex !== null;
  }

  get progress(): JobProgress | null {
    return this.progressNow;
  }

  /** Fetches the job's project first when it has one, then spawns it; a job that cannot start fails its attempt (exit code null) with the reason. */
  start(): void {
    const { launch, project } = this.opts;
    if (!launch.project) return this.spawn(null);
    if (!project) return this.cannotStart('this worker cannot fetch a project snapshot');
    void project.ready(launch, launch.project).then((got) => {
      if (this.phase === 'done' || this.stopRequested) return project.release(launch); // stopped while it was fetched
      if ('error' in got) return this.cannotStart(`its project (snapshot ${launch.project!.snapshot.slice(0, 12)}…) is not here: ${got.error}`);
      this.spawn(got);
    });
  }

  /** Spawns the job, in its project's folder when it has one. */
  private spawn(project: { cwd: string; env: Record<string, string> } | null): void {
    const { launch, log } = this.opts;
    const workDir = project?.cwd ?? this.opts.workDir;
    let argv: string[];
    try {
      rmSync(this.dir, { recursive: true, force: true });
      mkdirSync(this.outDir, { recursive: true });
      argv = jobArgv(launch.command, { workDir, env: this.opts.env, python: this.opts.python() });
      this.proc = new TrainingProcess({
        pty: this.opts.pty,
        argv,
        env: { ...this.env(), ...project?.env },
        cwd: workDir,
        clock: this.opts.clock,
        onOutput: (data) => this.output.push(data),
        onProgress: (line) => {
          this.progressNow = { step: line.step, totalSteps: line.totalSteps, loss: line.loss };
        },
      });
    } catch (error) {
      return this.cannotStart(error instanceof Error ? error.message : String(error));
    }
    const proc = this.proc;
    log(`started job ${launch.name} (attempt ${launch.attempt}): pid ${proc.pid}: ${argv.join(' ')}${project ? ` (in ${workDir})` : ''}`);
    this.output.start();
    void this.retrying('started', () => this.opts.calls.started(proc.pid));
    void proc.exited.then((exit) => this.onExit(exit));
  }

  private cannotStart(message: string): void {
    const { launch, log } = this.opts;
    log(`job ${launch.name} (attempt ${launch.attempt}) could not start: ${message}`);
    void this.finish(() => this.retrying('fail', () => this.opts.calls.fail({ exitCode: null, signal: null, error: `could not start: ${message}`.slice(0, 2000), outputTail: '' })));
  }

  /** Stops the job's process tree on purpose (cancelled, claim moved on, agent stopping); nothing more is said. */
  async abandon(why: string): Promise<void> {
    if (this.phase === 'done') return;
    this.opts.log(`stopping job ${this.opts.launch.name} (attempt ${this.opts.launch.attempt}): ${why}`);
    this.stopRequested = true;
    this.retryNow();
    await this.proc?.stop(this.opts.stopGraceMs);
    this.end();
  }

  /** SIGKILLs the job's group at once (a second Ctrl-C); abandon() still ends the attempt. */
  kill(): void {
    this.stopRequested = true;
    if (this.proc && !this.proc.hasExited) void this.proc.kill();
  }

  /** Waiting final calls try again now (the agent has joined again). */
  retryNow(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private env(): Record<string, string> {
    const { launch } = this.opts;
    return {
      ...filterInheritedEnv(this.opts.env),
      PYTHONUNBUFFERED: '1',
      ...trainerEnv(launch.env),
      GPU_SHARE_JOB_ID: launch.jobId,
      GPU_SHARE_OUTPUT_DIR: this.outDir,
      GPU_SHARE_ATTEMPT: String(launch.attempt),
      CUDA_VISIBLE_DEVICES: cudaVisibleDevices(launch, this.opts.gpus()),
    };
  }

  private async onExit(exit: ProcessExit): Promise<void> {
    if (this.stopRequested) return;
    const { name, attempt } = this.opts.launch;
    this.opts.log(`job ${name} (attempt ${attempt}) ${exit.signal !== null ? `was killed by signal ${exit.signal}` : `exited with code ${exit.exitCode}`}`);
    this.output.stop();
    await this.output.drain();
    if (exit.exitCode === 0 && exit.signal === null) await this.finish(() => this.completeWithArtifact());
    else {
      const error = exit.signal !== null ? `killed by signal ${exit.signal}` : `exited with code ${exit.exitCode}`;
      await this.finish(() => this.retrying('fail', () => this.opts.calls.fail({ exitCode: exit.exitCode, signal: exit.signal, error, outputTail: this.output.tail() })));
    }
  }

  /** Packs, uploads and completes; a pack or upload that cannot succeed fails the attempt instead. */
  private async completeWithArtifact(): Promise<JobReply> {
    const tarball = path.join(this.dir, 'output.tar.gz');
    let packed: { sha256: string; sizeBytes: number };
    try {
      packed = await packReproducibleTar(this.outDir, tarball);
    } catch (error) {
      return this.failAfterExit(`could not pack the output: ${error instanceof Error ? error.message : String(error)}`);
    }
    const uploaded = await this.retrying('upload', () => this.opts.calls.upload(tarball, packed.sha256, packed.sizeBytes, { [CLAIM_TOKEN_HEADER]: this.token }));
    if (uploaded.kind === 'refused') return this.failAfterExit(`could not upload the output: ${uploaded.why}`);
    if (uploaded.kind !== 'ok') return uploaded;
    return this.retrying('complete', () => this.opts.calls.complete(packed.sha256, packed.sizeBytes));
  }

  private failAfterExit(error: string): Promise<JobReply> {
    this.opts.log(`job ${this.opts.launch.name} (attempt ${this.opts.launch.attempt}): ${error}`);
    return this.retrying('fail', () => this.opts.calls.fail({ exitCode: 0, signal: null, error: error.split('\n')[0]!.slice(0, 2000), outputTail: this.output.tail() }));
  }

  /** Runs the final call(s) and ends the attempt, whatever they came to. */
  private async finish(final: () => Promise<JobReply>): Promise<void> {
    this.phase = 'finishing';
    const reply = await final();
    if (reply.kind === 'refused') this.opts.log(`the coordinator refused the end of job ${this.opts.launch.name}: ${reply.why}`);
    this.end();
  }

  /** `call` until it is answered for good; waits out 'retry' answers with a backoff, and stops on stop/abandon. */
  private async retrying(what: string, call: () => Promise<JobReply>): Promise<JobReply> {
    let delayMs: number = FINAL_CALL_BACKOFF.firstMs;
    for (;;) {
      if (this.stopRequested || this.phase === 'done') return { kind: 'gone', why: 'stopped' };
      const reply = await call();
      if (reply.kind === 'gone' && !this.stopRequested) void this.abandon(`its claim moved on (${reply.why})`);
      if (reply.kind !== 'retry') return reply;
      if (what === 'started' && this.phase !== 'running') return reply; // the end reports the job anyway
      this.opts.log(`job ${this.opts.launch.name}: ${what} not through (${reply.why}); trying again in ${delayMs / 1000} s`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          timer.cancel();
          this.waiters.delete(wake);
          resolve();
        };
        const timer = this.opts.clock.setTimeout(wake, delayMs);
        this.waiters.add(wake);
      });
      delayMs = Math.min(FINAL_CALL_BACKOFF.maxMs, delayMs * 2);
    }
  }

  private end(): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.output.stop();
    if (this.opts.launch.project) this.opts.project?.release(this.opts.launch);
    rmSync(this.dir, { recursive: true, force: true });
    try {
      rmdirSync(path.dirname(this.dir));
    } catch {
      // another attempt's folder is still there, or it was never made
    }
    this.opts.onDone();
  }
}
