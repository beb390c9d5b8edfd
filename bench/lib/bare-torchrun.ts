/**
 * torchrun started the way a person starts it by hand: a plain child process (pipes, no pty, no agent), in its
 * own process group so that "kill the whole node" is one signal to the group. Its tee'd output is parsed for
 * progress lines as it arrives.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { ProgressStream, type StampedProgress } from './progress-stream';

export class BareTorchrun {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly progress: ProgressStream;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private stderrTail = '';
  private readonly kept: string[] | null;

  /** With keepOutput the raw stdout is kept (output()) instead of parsed as it comes. */
  constructor(argv: string[], env: NodeJS.ProcessEnv, onLine?: (p: StampedProgress) => void, opts: { keepOutput?: boolean } = {}) {
    this.progress = new ProgressStream(onLine);
    this.kept = opts.keepOutput ? [] : null;
    this.child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    if (this.child.pid === undefined) throw new Error(`could not start ${argv[0]}`);
    this.pid = this.child.pid;
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => (this.kept ? this.kept.push(d) : this.progress.push(d)));
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      this.stderrTail = (this.stderrTail + d).slice(-4000);
    });
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  /** Its whole stdout so far, when started with keepOutput. */
  output(): string {
    return this.kept?.join('') ?? '';
  }

  /** The last lines it wrote to stderr, for messages. */
  stderr(): string {
    return this.stderrTail;
  }

  /** Signals its whole process group (the launcher and every rank it started); never throws. */
  signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // the group is gone
    }
  }
}
