/**
 * Delivers main→renderer events to one window's page, holding each channel's events until the page says it
 * listens there (as Electron Fiddle does), so nothing sent during start-up or a reload is lost; bounded so
 * a channel the page never subscribes to cannot grow without limit.
 */

/** The parts of WebContents the outbox uses. */
export interface OutboxTarget {
  isDestroyed(): boolean;
  send(channel: string, ...args: unknown[]): void;
}

export const DEFAULT_OUTBOX_LIMIT = 2000;

export class RendererOutbox {
  private readonly listening = new Set<string>();
  private queue: { channel: string; payload: unknown }[] = [];
  /** Events dropped because the queue was full (oldest first). */
  dropped = 0;

  constructor(
    private readonly target: OutboxTarget,
    private readonly limit = DEFAULT_OUTBOX_LIMIT,
  ) {}

  /** Sends now if the page listens on the channel, else queues. Returns false when the target is gone. */
  send(channel: string, payload: unknown): boolean {
    if (this.target.isDestroyed()) return false;
    if (this.listening.has(channel)) {
      this.target.send(channel, payload);
      return true;
    }
    this.queue.push({ channel, payload });
    if (this.queue.length > this.limit) {
      this.queue.shift();
      this.dropped += 1;
    }
    return true;
  }

  /** The page subscribed to a channel: release what waited for it, in order. */
  markListening(channel: string): void {
    this.listening.add(channel);
    if (this.target.isDestroyed()) return;
    const waiting = this.queue.filter((item) => item.channel === channel);
    if (waiting.length === 0) return;
    this.queue = this.queue.filter((item) => item.channel !== channel);
    for (const item of waiting) this.target.send(item.channel, item.payload);
  }

  /** A new document is loading: it has subscribed to nothing yet. */
  reset(): void {
    this.listening.clear();
  }

  get queued(): number {
    return this.queue.length;
  }

  isListening(channel: string): boolean {
    return this.listening.has(channel);
  }
}
