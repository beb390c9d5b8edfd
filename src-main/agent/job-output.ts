/**
 * A job's output on its way to the coordinator: gathered and sent at most twice a second, each request at most
 * 256 KiB, one at a time. A request without an answer is sent again (the coordinator may see a piece twice,
 * which costs a repeated line in a log and nothing else); while the coordinator is away the buffer stays
 * bounded by dropping the oldest output, with a note saying how much. The last ~8 KiB are kept apart for the
 * failure report, whatever was sent or dropped.
 */
import type { Clock } from '../platform/ports';

/** What a job call came to, for the attempt: go on, stop for good, try again later, or give up on this call. */
export type JobReply = { kind: 'ok' } | { kind: 'gone'; why: string } | { kind: 'retry'; why: string } | { kind: 'refused'; why: string };

/** At most two output requests a second per job. */
export const JOB_OUTPUT_FLUSH_MS = 500;
/** Largest output request, in bytes of UTF-8. */
export const MAX_JOB_OUTPUT_BYTES = 256 * 1024;
/** Most output characters held while the coordinator does not take them. */
export const MAX_BUFFERED_JOB_OUTPUT_CHARS = 1_000_000;
/** How much of the end of the output a failure carries. */
export const OUTPUT_TAIL_CHARS = 8 * 1024;

export interface JobOutputSenderOptions {
  clock: Clock;
  send: (data: string) => Promise<JobReply>;
  /** The coordinator says the claim is no longer ours (409): the job must stop. */
  onGone: (why: string) => void;
  log: (line: string) => void;
}

/** The longest start of `text` that is at most `maxBytes` in UTF-8 (never splitting a surrogate pair). */
export function headWithinBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let low = 0;
  let high = Math.min(text.length, maxBytes);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (Buffer.byteLength(text.slice(0, mid), 'utf8') <= maxBytes) low = mid;
    else high = mid - 1;
  }
  const code = text.charCodeAt(low - 1);
  return code >= 0xd800 && code <= 0xdbff ? text.slice(0, low - 1) : text.slice(0, low);
}

export class JobOutputSender {
  private buffer = '';
  private dropped = 0;
  private tailText = '';
  private timer: { cancel(): void } | null = null;
  private inFlight: Promise<void> | null = null;
  private gone = false;

  constructor(private readonly opts: JobOutputSenderOptions) {}

  start(): void {
    this.timer ??= this.opts.clock.setInterval(() => void this.flush(), JOB_OUTPUT_FLUSH_MS);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  push(data: string): void {
    if (data.length === 0) return;
    this.tailText = (this.tailText + data).slice(-OUTPUT_TAIL_CHARS);
    this.buffer += data;
    const excess = this.buffer.length - MAX_BUFFERED_JOB_OUTPUT_CHARS;
    if (excess > 0) {
      this.buffer = this.buffer.slice(excess);
      this.dropped += excess;
    }
  }

  /** The last OUTPUT_TAIL_CHARS characters the job printed. */
  tail(): string {
    return this.tailText;
  }

  /** Sends one request's worth unless one is on its way (then resolves with that one). */
  flush(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    if (this.gone || (this.buffer.length === 0 && this.dropped === 0)) return Promise.resolve();
    const note = this.dropped > 0 ? `[gpu-share: ${this.dropped} characters of output were dropped while the coordinator was not taking them]\r\n` : '';
    const piece = headWithinBytes(note + this.buffer, MAX_JOB_OUTPUT_BYTES);
    const fromBuffer = Math.max(0, piece.length - note.length);
    const droppedAtSend = this.dropped;
    this.inFlight = this.opts
      .send(piece)
      .then((reply) => {
        if (reply.kind === 'retry') return; // kept as it is, for the next flush
        if (reply.kind === 'gone') {
          this.gone = true;
          this.opts.onGone(reply.why);
          return;
        }
        if (reply.kind === 'refused') this.opts.log(`the coordinator refused a piece of job output (${reply.why}); dropped it`);
        // Output dropped while this was on its way came off the front of the buffer, ahead of what was sent.
        const droppedSince = this.dropped - droppedAtSend;
        this.dropped = droppedSince;
        this.buffer = this.buffer.slice(Math.max(0, fromBuffer - droppedSince));
      })
      .finally(() => {
        this.inFlight = null;
      });
    return this.inFlight;
  }

  /**
   * Sends what is left before the job's final call, so its log is complete when it shows as finished; gives up
   * at the first request that does not go through (the final call carries the tail anyway).
   */
  async drain(): Promise<void> {
    await this.inFlight;
    while (!this.gone && (this.buffer.length > 0 || this.dropped > 0)) {
      const before = this.buffer.length + this.dropped;
      await this.flush();
      if (this.buffer.length + this.dropped >= before) return;
    }
  }
}
