/**
 * One launched training command in a pty: its output, its progress lines, and a stop that always ends the
 * whole process group. Stopping is SIGTERM to the group (torchrun forwards it and lets ranks exit), then
 * SIGKILL after a grace period, so a wedged rank can never outlive its launcher.
 */
import type { Clock, PtyProcess, PtySpawner } from '../ports';
import { parseProgressLines, type TrainerProgressLine } from './progress-line';

export interface ProcessExit {
  exitCode: number | null;
  signal: number | null;
}

export interface TrainingProcessOptions {
  pty: PtySpawner;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  clock: Clock;
  onOutput?: (data: string) => void;
  onProgress?: (line: TrainerProgressLine) => void;
}

export const DEFAULT_STOP_GRACE_MS = 3000;

export class TrainingProcess {
  readonly pid: number;
  /** Resolves once the launcher has exited and its group has been cleared. */
  readonly exited: Promise<ProcessExit>;
  private readonly child: PtyProcess;
  private readonly clock: Clock;
  private exitInfo: ProcessExit | null = null;
  private stopping: Promise<ProcessExit> | null = null;
  private carry = '';

  /** Spawns the process; throws only when the pty itself cannot be created (bad cwd, no pty devices). */
  constructor(opts: TrainingProcessOptions) {
    const [file, ...args] = opts.argv;
    if (!file) throw new Error('empty command line');
    this.clock = opts.clock;
    this.child = opts.pty.spawn(file, args, { cwd: opts.cwd, env: opts.env });
    this.pid = this.child.pid;
    this.child.onData((data) => {
      opts.onOutput?.(data);
      if (!opts.onProgress) return;
      const parsed = parseProgressLines(data, this.carry);
      this.carry = parsed.carry;
      for (const line of parsed.progress) opts.onProgress(line);
    });
    this.exited = new Promise((resolve) => {
      this.child.onExit((exit) => {
        this.exitInfo = exit;
        // Ranks must never outlive their launcher: clear whatever is left in its process group.
        this.child.kill('SIGKILL');
        resolve(exit);
      });
    });
  }

  get hasExited(): boolean {
    return this.exitInfo !== null;
  }

  /** SIGTERM to the group, SIGKILL after `graceMs` if it is still there; idempotent. */
  stop(graceMs: number = DEFAULT_STOP_GRACE_MS): Promise<ProcessExit> {
    if (this.stopping) return this.stopping;
    if (this.exitInfo) return (this.stopping = Promise.resolve(this.exitInfo));
    this.child.kill('SIGTERM');
    const timer = this.clock.setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    this.stopping = this.exited.then((exit) => {
      timer.cancel();
      return exit;
    });
    return this.stopping;
  }

  /** SIGKILL to the group at once. */
  kill(): Promise<ProcessExit> {
    if (!this.exitInfo) this.child.kill('SIGKILL');
    return this.exited;
  }
}
