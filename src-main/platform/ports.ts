/**
 * The OS pieces the core needs, as small interfaces injected at start-up. The Electron shell supplies
 * Electron versions, `gpu-share serve` headless ones, tests fakes. Nothing below src-main/core imports electron.
 */
import type { UserNotification } from '../../src-shared/training';

/** Wall-clock and monotonic time, and timers; fake in tests so heartbeat timeouts run instantly. */
export interface Clock {
  /** Epoch ms. */
  now(): number;
  /** Monotonic ms, for durations. */
  monotonic(): number;
  setInterval(fn: () => void, ms: number): { cancel(): void };
  setTimeout(fn: () => void, ms: number): { cancel(): void };
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setInterval: (fn, ms) => {
    const t = setInterval(fn, ms);
    t.unref?.();
    return { cancel: () => clearInterval(t) };
  },
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};

/** Native notifications (Electron) or in-page toasts (headless). */
export interface Notifier {
  notify(notification: UserNotification): void;
}

/** The tray icon's state: normal, or marked because something needs attention. */
export interface TrayPort {
  setAttention(message: string | null): void;
}

/** A running process in a pseudo-terminal. */
export interface PtyProcess {
  readonly pid: number;
  onData(listener: (data: string) => void): void;
  onExit(listener: (exit: { exitCode: number | null; signal: number | null }) => void): void;
  /** Signal the whole process group (the launcher and every rank it started). */
  kill(signal?: NodeJS.Signals): void;
}

export interface PtySpawnOptions {
  cwd?: string;
  env: Record<string, string>;
  cols?: number;
  rows?: number;
}

/** Starts processes in a pty (node-pty in the app; tests may use the same real implementation). */
export interface PtySpawner {
  spawn(file: string, args: string[], options: PtySpawnOptions): PtyProcess;
}

/** Where the app keeps its files (Electron's userData, or ~/.config/gpu-share headless). */
export interface AppPaths {
  userData: string;
}
