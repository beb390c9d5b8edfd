/**
 * An in-memory pty for the training supervisor's tests: it records the signals sent to it and exits when a
 * test says so, or on SIGKILL (and on SIGTERM unless it was told to ignore it, like a trainer that traps it).
 */
import type { PtyProcess, PtySpawner, PtySpawnOptions } from '../../../src-main/platform/ports';

export class FakePty implements PtyProcess {
  readonly signals: NodeJS.Signals[] = [];
  ignoreTerm = false;
  private dataListeners: ((data: string) => void)[] = [];
  private exitListeners: ((exit: { exitCode: number | null; signal: number | null }) => void)[] = [];
  private done = false;

  constructor(
    readonly pid: number,
    readonly file: string,
    readonly args: string[],
    readonly options: PtySpawnOptions,
  ) {}

  onData(listener: (data: string) => void): void {
    this.dataListeners.push(listener);
  }

  onExit(listener: (exit: { exitCode: number | null; signal: number | null }) => void): void {
    this.exitListeners.push(listener);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.signals.push(signal);
    if (signal === 'SIGKILL') this.exit(null, 9);
    else if (signal === 'SIGTERM' && !this.ignoreTerm) this.exit(null, 15);
  }

  /** The trainer prints. */
  write(data: string): void {
    for (const l of this.dataListeners) l(data);
  }

  exit(exitCode: number | null, signal: number | null = null): void {
    if (this.done) return;
    this.done = true;
    for (const l of this.exitListeners) l({ exitCode, signal });
  }
}

export class FakePtySpawner implements PtySpawner {
  readonly spawned: FakePty[] = [];
  private nextPid = 4000;

  spawn(file: string, args: string[], options: PtySpawnOptions): FakePty {
    const pty = new FakePty(this.nextPid++, file, args, options);
    this.spawned.push(pty);
    return pty;
  }

  get last(): FakePty {
    const pty = this.spawned[this.spawned.length - 1];
    if (!pty) throw new Error('nothing was spawned');
    return pty;
  }
}

/** Lets pending promise callbacks run (no time passes on any clock). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
