/**
 * One shared clock for everything that ticks ("1.2 s ago"): a single interval, started while something
 * on screen listens, so a table of workers does not run a timer per row.
 */
import { useSyncExternalStore } from 'react';

const TICK_MS = 200;
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | null = null;
let now = Date.now();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!timer) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const l of [...listeners]) l();
    }, TICK_MS);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}

export function useNow(): number {
  return useSyncExternalStore(subscribe, () => now);
}

const still = () => () => {};

/** Now to the whole second: a re-render a second, not five. With `paused` (nothing on screen moves) none. */
export function useNowSeconds(paused = false): number {
  return useSyncExternalStore(paused ? still : subscribe, () => Math.floor(now / 1000) * 1000);
}
