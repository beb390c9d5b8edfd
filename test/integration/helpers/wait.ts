/**
 * Waiting on state instead of sleeping: every source a test watches (agent output, coordinator changes)
 * calls pulse(), and each waiter re-checks its condition then. A slow fallback re-check covers conditions
 * no source announces (a process ending), and a timeout fails with what was awaited and what was seen.
 */
import { EventEmitter } from 'node:events';

const bus = new EventEmitter();
bus.setMaxListeners(0);

/** Tells every waiter that something it may be watching changed. */
export function pulse(): void {
  bus.emit('pulse');
}

export interface WaitOptions {
  timeoutMs: number;
  /** What was seen so far, for the timeout message. */
  describe?: () => string;
  /** Fallback re-check interval (ms). */
  recheckMs?: number;
}

/** Resolves with the first truthy value of `check()`; rejects after the timeout, naming `what`. */
export function waitFor<T>(what: string, check: () => T | null | undefined | false, opts: WaitOptions): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      bus.off('pulse', test);
      clearInterval(recheck);
      clearTimeout(timer);
      fn();
    };
    const test = () => {
      let value: T | null | undefined | false;
      try {
        value = check();
      } catch (error) {
        finish(() => reject(error));
        return;
      }
      if (value) finish(() => resolve(value as T));
    };
    const recheck = setInterval(test, opts.recheckMs ?? 100);
    const timer = setTimeout(() => {
      const seen = opts.describe ? `; seen: ${opts.describe()}` : '';
      finish(() => reject(new Error(`timed out after ${(opts.timeoutMs / 1000).toFixed(1)} s waiting for ${what}${seen}`)));
    }, opts.timeoutMs);
    bus.on('pulse', test);
    test();
  });
}
