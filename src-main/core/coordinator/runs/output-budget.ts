/**
 * A per-worker allowance for training output. One worker once pushed 380 MB in 8 s and the coordinator
 * peaked at 1.6 GB; output beyond the allowance is dropped (counted, and said once a second in the run's
 * output) so a runaway or hostile worker costs the coordinator a bounded amount of memory and CPU.
 */
import type { Clock } from '../../../platform/ports';

export interface OutputBudgetOptions {
  /** Sustained bytes per second per worker (default 256 KiB/s). */
  bytesPerSec?: number;
  /** Bytes a worker may send at once after a quiet spell (default 1 MiB). */
  burstBytes?: number;
}

interface Bucket {
  tokens: number;
  at: number;
  dropped: number;
  lastNoticeAt: number;
}

export interface OutputVerdict {
  /** The part of the chunk to keep ('' when nothing fits). */
  kept: string;
  /** A line to append saying what was dropped since the last notice; null when nothing to say yet. */
  notice: string | null;
}

const NOTICE_EVERY_MS = 1000;

export class OutputBudget {
  private readonly buckets = new Map<number, Bucket>();
  private readonly rate: number;
  private readonly burst: number;

  constructor(
    private readonly clock: Clock,
    opts: OutputBudgetOptions = {},
  ) {
    this.rate = opts.bytesPerSec ?? 256 * 1024;
    this.burst = opts.burstBytes ?? 1024 * 1024;
  }

  /** Takes what the worker's allowance covers of `data` (whole characters, cut at a line end when possible). */
  take(workerId: number, node: string, data: string): OutputVerdict {
    const now = this.clock.monotonic();
    let b = this.buckets.get(workerId);
    if (!b) {
      b = { tokens: this.burst, at: now, dropped: 0, lastNoticeAt: -Infinity };
      this.buckets.set(workerId, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.rate);
    b.at = now;
    let kept = data;
    // Characters, not bytes: close enough for a budget and never splits a surrogate pair's byte sequence.
    if (data.length > b.tokens) {
      const room = Math.max(0, Math.floor(b.tokens));
      const cut = data.lastIndexOf('\n', room - 1);
      kept = cut >= 0 ? data.slice(0, cut + 1) : '';
      b.dropped += data.length - kept.length;
    }
    b.tokens -= kept.length;
    let notice: string | null = null;
    if (b.dropped > 0 && now - b.lastNoticeAt >= NOTICE_EVERY_MS) {
      notice = `\r\n[gpu-share] dropped ${b.dropped} characters of output from ${node}: more than ${Math.round(this.rate / 1024)} KiB/s\r\n`;
      b.dropped = 0;
      b.lastNoticeAt = now;
    }
    return { kept, notice };
  }

  forget(workerId: number): void {
    this.buckets.delete(workerId);
  }
}
