/**
 * Merges bursts of like notifications, so one report of 1,000 residency failures (or 1,000 workers dropping
 * at once) makes one OS notification and one toast, not 1,000. The first of a burst goes out at once, so a
 * single failure is never delayed; the rest within the window are counted and sent as one summary when it
 * closes ("…and 999 more"). A flood that goes on makes one summary per window, never more.
 *
 * Notifications are alike when they share a key: the group given with them, else their title. Titles often
 * carry a node name another machine chose, so keys are bounded too: past a few new keys in one window, new
 * keys share one overflow bucket, and any number of distinct titles still makes a bounded number of alerts.
 */
import type { EventSeverity, UserNotification } from '../../../../src-shared/training';
import type { Clock } from '../../../platform/ports';

export const DEFAULT_COALESCE_WINDOW_MS = 2000;
/** New keys that may each go out at once within one window before the rest share the overflow bucket. */
export const DEFAULT_MAX_KEYS_PER_WINDOW = 5;

export interface NotificationCoalescerOptions {
  clock: Clock;
  /** Where notifications (single or summary) go: the page, the OS notifier, the tray. */
  sink: (notification: UserNotification) => void;
  windowMs?: number;
  maxKeysPerWindow?: number;
}

interface Bucket {
  /** Notifications held back in the current window (the summary's count). */
  held: number;
  last: UserNotification | null;
  severity: EventSeverity;
  /** The title all held ones share, or null once two differ. */
  sameTitle: string | null | undefined;
  runId: string | null | undefined;
  workerId: number | null | undefined;
  timer: { cancel(): void };
}

const OVERFLOW_KEY = '\u0000overflow';
const RANK: Record<EventSeverity, number> = { info: 0, warning: 1, error: 2 };

export class NotificationCoalescer {
  private readonly buckets = new Map<string, Bucket>();
  /** When each of this window's keys opened (monotonic ms), to bound the number of keys. */
  private opened: number[] = [];
  private readonly windowMs: number;
  private readonly maxKeys: number;

  constructor(private readonly opts: NotificationCoalescerOptions) {
    this.windowMs = opts.windowMs ?? DEFAULT_COALESCE_WINDOW_MS;
    this.maxKeys = opts.maxKeysPerWindow ?? DEFAULT_MAX_KEYS_PER_WINDOW;
  }

  /** Sends now when nothing like it went out within the window; otherwise counts it into the next summary. */
  push(notification: UserNotification, group?: string): void {
    const key = group ?? notification.title;
    const existing = this.buckets.get(key);
    if (existing) {
      hold(existing, notification);
    } else if (this.keysFull()) {
      // Too many different keys at once: the rest wait for one shared summary instead of going out each.
      hold(this.buckets.get(OVERFLOW_KEY) ?? this.open(OVERFLOW_KEY), notification);
    } else {
      this.open(key);
      this.opts.sink(notification);
    }
  }

  /** Sends every waiting summary now (a test, or a shell that wants them before it quits). */
  flush(): void {
    for (const key of [...this.buckets.keys()]) this.close(key, false);
  }

  /** Cancels the timers; waiting summaries are dropped. */
  stop(): void {
    for (const bucket of this.buckets.values()) bucket.timer.cancel();
    this.buckets.clear();
    this.opened = [];
  }

  /** Notifications held back right now, over all keys (for tests and diagnostics). */
  get pending(): number {
    let n = 0;
    for (const bucket of this.buckets.values()) n += bucket.held;
    return n;
  }

  private keysFull(): boolean {
    const since = this.opts.clock.monotonic() - this.windowMs;
    this.opened = this.opened.filter((t) => t > since);
    return this.opened.length >= this.maxKeys;
  }

  private open(key: string): Bucket {
    const bucket: Bucket = {
      held: 0,
      last: null,
      severity: 'info',
      sameTitle: undefined,
      runId: undefined,
      workerId: undefined,
      timer: this.opts.clock.setTimeout(() => this.close(key, true), this.windowMs),
    };
    this.buckets.set(key, bucket);
    if (key !== OVERFLOW_KEY) this.opened.push(this.opts.clock.monotonic());
    return bucket;
  }

  /** The window closed: send what it held, and keep the key coalescing while the burst goes on. */
  private close(key: string, reopen: boolean): void {
    const bucket = this.buckets.get(key);
    if (!bucket) return;
    bucket.timer.cancel();
    this.buckets.delete(key);
    if (bucket.held === 0 || !bucket.last) return;
    this.opts.sink(summarize(bucket, this.windowMs));
    if (reopen) this.open(key);
  }
}

function hold(bucket: Bucket, n: UserNotification): void {
  bucket.held += 1;
  bucket.last = n;
  if (RANK[n.severity] > RANK[bucket.severity]) bucket.severity = n.severity;
  bucket.sameTitle = bucket.sameTitle === undefined || bucket.sameTitle === n.title ? n.title : null;
  bucket.runId = merge(bucket.runId, n.target?.runId ?? null);
  bucket.workerId = merge(bucket.workerId, n.target?.workerId ?? null);
}

/** The value all held notifications share, or null once two differ. */
function merge<T>(current: T | null | undefined, next: T | null): T | null {
  return current === undefined || current === next ? next : null;
}

/** One notification standing for everything a window held: the latest one's words, and how many there were. */
function summarize(bucket: Bucket, windowMs: number): UserNotification {
  const last = bucket.last!;
  if (bucket.held === 1) return last;
  const count = bucket.held.toLocaleString('en-US');
  const summary: UserNotification = {
    id: `${last.id}+${bucket.held - 1}`,
    title: bucket.sameTitle ? `${last.title} (${count} more times)` : `${last.title} …and ${(bucket.held - 1).toLocaleString('en-US')} more`,
    body: `${last.body} (${count} notifications like this within ${Math.round(windowMs / 100) / 10} s.)`,
    severity: bucket.severity,
  };
  if (last.target) {
    // Point where all of them point; a click cannot take the person to 1,000 workers at once.
    const target: NonNullable<UserNotification['target']> = { view: last.target.view };
    if (bucket.runId) target.runId = bucket.runId;
    if (bucket.workerId !== null && bucket.workerId !== undefined) target.workerId = bucket.workerId;
    summary.target = target;
  }
  return summary;
}
