/**
 * Sends what the agent has to tell the coordinator (output, started, exited, residency) in numbered batches,
 * when asked and from a timer that looks every REPORT_FLUSH_MS: a lifecycle report (or a batch to send again)
 * goes at the next look, output and progress points alone at most every BULK_FLUSH_MS unless a batch's worth
 * waits. A request costs both sides far more CPU than the lines in it (signing, HTTP, validation: ~5 requests
 * a second were most of the app's CPU per progress line, bench/steps-per-second.ts), so a trainer printing
 * hundreds of lines a second costs one request a second; output after a quiet second still goes within
 * REPORT_FLUSH_MS. A batch without an answer (no answer, a 5xx) is sent again, same number
 * and contents; a refusal that means "I do not know this session" (401/404/409) ends the session; any other
 * refusal drops the batch with a log line, since sending it again would be refused again.
 */
import type { Report } from '../../src-shared/worker-protocol';
import type { Clock } from '../platform/ports';
import type { ApiReply } from './coordinator-client';
import { ReportQueue, type ReportBatch } from './report-queue';

/** How often the sender looks at the queue: lifecycle reports (started, exited, residency) go within this. */
export const REPORT_FLUSH_MS = 200;
/** Least time between two sends of output and progress points alone (a batch's worth waiting goes at once). */
export const BULK_FLUSH_MS = 1000;
/** Output characters (progress points weigh ~200) past which bulk goes at the next look, not after BULK_FLUSH_MS. */
export const BULK_EAGER_CHARS = 256 * 1024;

export interface ReportSenderOptions {
  clock: Clock;
  log: (line: string) => void;
  /** Posts one batch under the current session; called at the start of a flush. */
  send: (batch: ReportBatch) => Promise<ApiReply>;
  /** Whether reports may go now (joined, or finishing up before a goodbye). */
  ready: () => boolean;
  /** The session number now; an answer that arrives after it changed is ignored. */
  epoch: () => number;
  /** The coordinator no longer knows this session; `epoch`: the refusing coordinator's, when it said one. */
  onRefused: (why: string, epoch: string | undefined) => void;
  queue?: ReportQueue;
}

export class ReportSender {
  private readonly queue: ReportQueue;
  private timer: { cancel(): void } | null = null;
  private flushing: Promise<void> | null = null;
  /** When the last batch was sent (monotonic ms). */
  private lastSentAt = -Infinity;

  constructor(private readonly opts: ReportSenderOptions) {
    this.queue = opts.queue ?? new ReportQueue();
  }

  /** Looks every REPORT_FLUSH_MS until stop(), sending what is due (see the file's comment). */
  start(): void {
    this.timer ??= this.opts.clock.setInterval(() => {
      if (this.due()) void this.flush();
    }, REPORT_FLUSH_MS);
  }

  /** Whether the timer sends now: something urgent waits, a batch's worth of bulk, or BULK_FLUSH_MS passed. */
  private due(): boolean {
    return this.queue.hasUrgent() || this.queue.bulkWeight() >= BULK_EAGER_CHARS || this.opts.clock.monotonic() - this.lastSentAt >= BULK_FLUSH_MS;
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  push(report: Report): void {
    this.queue.push(report);
  }

  /** Keeps what is queued for a re-attached session, numbering from 1 again (see ReportQueue.renumber). */
  renumber(): void {
    this.queue.renumber();
  }

  /** Forgets everything queued (a new session numbers its batches from 1 again). */
  clear(): void {
    this.queue.clear();
  }

  /** Sends the next batch unless one is on its way (then resolves with that one). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (!this.opts.ready() || this.queue.isEmpty()) return Promise.resolve();
    const batch = this.queue.nextBatch();
    if (!batch) return Promise.resolve();
    const epoch = this.opts.epoch();
    this.lastSentAt = this.opts.clock.monotonic();
    this.flushing = this.opts
      .send(batch)
      .then((reply) => {
        if (epoch === this.opts.epoch()) this.settle(batch, reply);
      })
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }

  /** Waits for the batch on its way, then sends one more: what goes before the goodbye. */
  async drain(): Promise<void> {
    await this.flushing;
    await this.flush();
  }

  private settle(batch: ReportBatch, reply: ApiReply): void {
    if (reply.kind === 'ok') {
      this.queue.settle(batch);
      return;
    }
    // Kept for the next try, with the same number: the coordinator may have taken it and only the answer was lost.
    if (reply.kind !== 'http-error' || reply.status >= 500) return;
    if (reply.status === 409 || reply.status === 404 || reply.status === 401) {
      this.opts.onRefused(`the coordinator refused our reports (${reply.status}: ${reply.message})`, reply.epoch);
    } else {
      this.queue.settle(batch);
      this.opts.log(`the coordinator rejected ${batch.reports.length} report(s) (${reply.status}: ${reply.message}); dropped them`);
    }
  }
}
