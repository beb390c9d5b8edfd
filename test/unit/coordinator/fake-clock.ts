/** A Clock whose time moves only when a test says so, so heartbeat timeouts take no real time. */
import type { Clock } from '../../../src-main/platform/ports';

interface Timer {
  id: number;
  due: number;
  every: number | null;
  fn: () => void;
}

export class FakeClock implements Clock {
  private mono = 0;
  private readonly epochBase: number;
  private timers: Timer[] = [];
  private nextId = 1;

  constructor(epochBase = Date.UTC(2026, 0, 1, 12, 0, 0)) {
    this.epochBase = epochBase;
  }

  now(): number {
    return this.epochBase + this.mono;
  }

  monotonic(): number {
    return this.mono;
  }

  setInterval(fn: () => void, ms: number): { cancel(): void } {
    return this.add(fn, ms, ms);
  }

  setTimeout(fn: () => void, ms: number): { cancel(): void } {
    return this.add(fn, ms, null);
  }

  /** Timers still scheduled (lets a test check that stop() cancelled them). */
  pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing due timers in order at their own times. */
  advance(ms: number): void {
    const target = this.mono + ms;
    for (;;) {
      const next = this.timers.filter((t) => t.due <= target).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!next) break;
      this.mono = Math.max(this.mono, next.due);
      if (next.every === null) this.timers = this.timers.filter((t) => t !== next);
      else next.due += Math.max(1, next.every);
      next.fn();
    }
    this.mono = target;
  }

  private add(fn: () => void, ms: number, every: number | null): { cancel(): void } {
    const timer: Timer = { id: this.nextId++, due: this.mono + Math.max(0, ms), every, fn };
    this.timers.push(timer);
    return { cancel: () => (this.timers = this.timers.filter((t) => t !== timer)) };
  }
}
