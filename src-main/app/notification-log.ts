/**
 * What the app told people, kept in state.db beside the coordinator's events (issue 25 item 4): the bell's list
 * in the page used to live only in that page, so a reload emptied it. Every notification announced is recorded
 * here with its time and a sequence number that never repeats across restarts (notification ids do: the
 * coordinator numbers them from n1 each start); pages read the list at load (getNotifications). Bounded: the
 * newest MAX_KEPT only. Notifications announced before the database is open are kept in memory and written
 * once it is attached.
 */
import type { NotificationRecord, UserNotification } from '../../src-shared/training';

/** Entries kept (the page's list keeps as many). */
export const MAX_KEPT = 100;

/** The state database's kv key of the list. */
export const NOTIFICATIONS_KEY = 'notifications';

/** The part of state.db's kv table the log uses. */
export interface NotificationStore {
  get<T>(key: string): T | undefined;
  set(key: string, value: unknown): void;
}

/** A stored list that is not an array of records (a hand-edited or older database) is dropped, not trusted. */
function readRecords(store: NotificationStore): NotificationRecord[] {
  try {
    const value = store.get<unknown>(NOTIFICATIONS_KEY);
    if (!Array.isArray(value)) return [];
    return value.filter((r): r is NotificationRecord => typeof r === 'object' && r !== null && typeof (r as NotificationRecord).seq === 'number' && typeof (r as NotificationRecord).at === 'number' && typeof (r as NotificationRecord).notification?.title === 'string');
  } catch {
    return [];
  }
}

export class NotificationLog {
  private entries: NotificationRecord[] = [];
  private store: NotificationStore | null = null;
  private seq = 0;

  /** Reads what was kept before this start; entries recorded meanwhile go after them, and everything is written. */
  attach(store: NotificationStore): void {
    const kept = readRecords(store);
    this.seq = Math.max(0, ...kept.map((r) => r.seq));
    const early = this.entries.map((r) => ({ ...r, seq: ++this.seq }));
    this.store = store;
    this.entries = [...kept, ...early].slice(-MAX_KEPT);
    if (early.length > 0) this.save();
  }

  record(notification: UserNotification, at: number): void {
    this.entries.push({ seq: ++this.seq, at, notification });
    if (this.entries.length > MAX_KEPT) this.entries.splice(0, this.entries.length - MAX_KEPT);
    this.save();
  }

  /** Oldest first. */
  list(): NotificationRecord[] {
    return this.entries.map((r) => ({ ...r }));
  }

  private save(): void {
    try {
      this.store?.set(NOTIFICATIONS_KEY, this.entries);
    } catch {
      // A full or read-only disk must not stop a notification from being shown; the list stays in memory.
    }
  }
}
