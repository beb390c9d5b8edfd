/**
 * The agent's beat: one heartbeat (or, while the coordinator is lost, one try at joining again) every interval,
 * never two at once. A beat that takes long eats into the wait for the next; a poke (the coordinator has
 * instructions waiting) beats at once, or right after the beat in flight.
 */
import type { Clock } from '../platform/ports';

export interface HeartbeatLoopOptions {
  clock: Clock;
  log: (line: string) => void;
  /** The interval now (the join's; while lost, the session's retry delay), read after each beat. */
  intervalMs: () => number;
  /** One beat; an error is logged and the loop carries on. */
  beat: () => Promise<void>;
}

export class HeartbeatLoop {
  private timer: { cancel(): void } | null = null;
  /** A beat is in flight; a poke meanwhile asks for another right after it. */
  private ticking = false;
  private pokedWhileTicking = false;
  private stopped = false;

  constructor(private readonly opts: HeartbeatLoopOptions) {}

  /** The first beat after `delayMs`. */
  start(delayMs: number): void {
    this.schedule(delayMs);
  }

  /** Beat now (after the one in flight, if any). */
  poke(): void {
    if (this.ticking) {
      this.pokedWhileTicking = true;
      return;
    }
    this.timer?.cancel();
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.opts.clock.setTimeout(() => void this.tick(), Math.max(0, delayMs));
  }

  private async tick(): Promise<void> {
    const began = this.opts.clock.monotonic();
    this.ticking = true;
    this.pokedWhileTicking = false;
    try {
      await this.opts.beat();
    } catch (error) {
      this.opts.log(`internal error in the heartbeat loop (carrying on): ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.ticking = false;
    }
    // Read after the beat: the beat may have changed it (a refused rejoin's backoff, a coordinator's retryAfterMs).
    const interval = this.opts.intervalMs();
    this.schedule(this.pokedWhileTicking ? 0 : interval - (this.opts.clock.monotonic() - began));
  }
}
