/**
 * Progress lines out of a raw output stream, stamped with when they arrived, and the step rate they show.
 * Rates come from the trainer's own per-step timings: each line's samples_per_sec is batch ÷ the time since
 * the previous line's, so those durations add up to exactly the wall time of a run of steps, measured inside
 * the rank — independent of how (pty, pipe, HTTP reports) and how late the lines travel to us.
 */
import { performance } from 'node:perf_hooks';
import { parseProgressLines, type TrainerProgressLine } from '../../src-main/platform/runs/progress-line';

export interface StampedProgress {
  at: number;
  line: TrainerProgressLine;
}

export class ProgressStream {
  readonly lines: StampedProgress[] = [];
  private carry = '';

  constructor(private readonly onLine?: (p: StampedProgress) => void) {}

  push(chunk: string, at = performance.now()): void {
    const parsed = parseProgressLines(chunk, this.carry);
    this.carry = parsed.carry;
    for (const line of parsed.progress) {
      const p = { at, line };
      this.lines.push(p);
      this.onLine?.(p);
    }
  }
}

export interface StepRate {
  stepsPerSec: number;
  /** Steps in the measured (steady) window. */
  steps: number;
  /** Seconds those steps took, by the trainer's clock. */
  seconds: number;
}

/**
 * Steps per second of one rank over the steady part of a run: the first `skipHead` and last `skipTail`
 * fractions of its steps are left out (start-up, the final barrier). Null when too few lines came.
 */
export function steadyStepRate(lines: readonly StampedProgress[], batch: number, rank = 0, skipHead = 0.2, skipTail = 0.05): StepRate | null {
  const mine = lines.filter((p) => (p.line.rank ?? 0) === rank && p.line.samplesPerSec !== null && p.line.samplesPerSec > 0);
  const from = Math.floor(mine.length * skipHead);
  const to = Math.ceil(mine.length * (1 - skipTail));
  const window = mine.slice(from, to);
  if (window.length < 10) return null;
  const seconds = window.reduce((sum, p) => sum + batch / p.line.samplesPerSec!, 0);
  return { stepsPerSec: window.length / seconds, steps: window.length, seconds };
}
