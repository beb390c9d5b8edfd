/**
 * One process running on a namespace host, with every output line kept and stamped so a test can wait on
 * what the process says instead of sleeping. Lines from stdout and stderr are both kept (the app prints
 * its join line on stdout and its warnings on stderr); pty output has '\r' that is stripped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { pulse, waitFor } from '../../integration/helpers/wait';

export interface Line {
  at: number;
  stream: 'out' | 'err';
  text: string;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Kept lines per process; a long run prints one progress line a step, and memory is bounded by this. */
const MAX_LINES = 50_000;

export class HostProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly lines: Line[] = [];
  exit: ExitStatus | null = null;
  readonly exited: Promise<ExitStatus>;
  private readonly carry = { out: '', err: '' };
  private readonly listeners = new Set<(line: Line) => void>();

  constructor(
    readonly label: string,
    command: string,
    args: string[],
    opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
  ) {
    this.child = spawn(command, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    if (this.child.pid === undefined) throw new Error(`could not start ${label}: ${command} ${args.join(' ')}`);
    this.pid = this.child.pid;
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        pulse();
        resolve(this.exit);
      });
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => this.onData('out', chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.onData('err', chunk));
  }

  private onData(stream: 'out' | 'err', chunk: string): void {
    const at = performance.now();
    const parts = (this.carry[stream] + chunk).split('\n');
    this.carry[stream] = parts.pop() ?? '';
    for (const raw of parts) {
      const line: Line = { at, stream, text: raw.replace(/\r/g, '') };
      if (this.lines.length >= MAX_LINES) this.lines.splice(0, MAX_LINES / 10);
      this.lines.push(line);
      for (const l of this.listeners) l(line);
    }
    pulse();
  }

  /** Calls `listener` for every line from now on; returns the unsubscribe. */
  onLine(listener: (line: Line) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The first kept line (at index `from` or later) matching `re`. */
  findLine(re: RegExp, from = 0): RegExpExecArray | null {
    for (let i = from; i < this.lines.length; i++) {
      const m = re.exec(this.lines[i]!.text);
      if (m) return m;
    }
    return null;
  }

  /** Resolves with the first line matching `re` (already printed or still to come); fails early if the process ends. */
  waitForLine(re: RegExp, timeoutMs: number, from = 0): Promise<RegExpExecArray> {
    return waitFor(
      `${this.label} to print ${re}`,
      () => {
        const m = this.findLine(re, from);
        if (m) return m;
        if (this.exit) throw new Error(`${this.label} exited (${JSON.stringify(this.exit)}) before printing ${re}:\n${this.tail()}`);
        return null;
      },
      { timeoutMs, describe: () => `\n${this.tail()}` },
    );
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.exit) return;
    try {
      process.kill(this.pid, signal);
    } catch {
      // already gone
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  async stop(graceMs = 10_000): Promise<ExitStatus> {
    if (this.exit) return this.exit;
    this.kill('SIGTERM');
    const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The last `n` lines, for failure messages. */
  tail(n = 25): string {
    return this.lines
      .slice(-n)
      .map((l) => `  ${this.label}${l.stream === 'err' ? '!' : ''}| ${l.text}`)
      .join('\n');
  }
}
