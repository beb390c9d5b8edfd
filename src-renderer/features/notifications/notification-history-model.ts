/**
 * What the toasts said, kept after they fade: toasts are bounded and go away on their own (issue 17 defect 8),
 * so a person who looked away needs a place to read them again — the bell in the header opens this list.
 * Newest last, bounded; "unread" is what arrived since the list was last opened. Pure transitions.
 */
import type { NotificationRecord, UserNotification } from '../../../src-shared/training';

/** One notification as a toast showed it, and as the list keeps it. */
export interface Toast {
  id: string;
  notification: UserNotification;
  at: number;
}

/** Entries kept; older ones are dropped (a page left open for days must not grow without end). */
export const MAX_HISTORY = 100;

export interface NotificationHistory {
  entries: Toast[];
  open: boolean;
  /** Epoch ms the list was last opened: entries after it are unread. */
  readAt: number;
}

export function initialNotificationHistory(): NotificationHistory {
  return { entries: [], open: false, readAt: 0 };
}

/** Any state that holds the notification history (AppState does); the slice's transitions keep the rest as it is. */
export interface HistoryHolder {
  /** Every toast's notification, kept after it fades. */
  notificationHistory: NotificationHistory;
}

/** A notification goes into the history (a repeat of the same id replaces the older entry). */
export function recordNotification(h: NotificationHistory, notification: UserNotification, at: number): NotificationHistory {
  const entries = [...h.entries.filter((e) => e.id !== notification.id), { id: notification.id, notification, at }];
  return { ...h, entries: entries.length > MAX_HISTORY ? entries.slice(entries.length - MAX_HISTORY) : entries };
}

export function unreadCount(h: NotificationHistory): number {
  return h.entries.filter((e) => e.at > h.readAt).length;
}

/** A kept entry's id in the list: notification ids repeat across the app's restarts, the log's numbers do not. */
export const keptId = (r: NotificationRecord): string => `kept-${r.seq}`;

const sameNotification = (a: UserNotification, b: UserNotification): boolean => a.id === b.id && a.title === b.title && a.body === b.body;

/**
 * The app's kept notifications (getNotifications, at load and after a reconnect) become the list: what was said
 * before this page opened, or while it was away, is there after a reload (issue 25 item 4). Entries that came
 * live and are in the kept list are that one entry; live ones it does not have yet stay. `readAt`: when this
 * browser last opened the list (kept in the browser), so a reload does not make old entries new again;
 * `clearedAt`: the newest entry it cleared, so Clear lasts past a reload.
 */
export function seedHistory<S extends HistoryHolder>(s: S, kept: NotificationRecord[], readAt: number, clearedAt = 0): S {
  const fromLog = kept.filter((r) => r.at > clearedAt).map((r) => ({ id: keptId(r), notification: r.notification, at: r.at }));
  const live = s.notificationHistory.entries.filter((e) => !kept.some((r) => sameNotification(r.notification, e.notification)));
  const entries = [...fromLog, ...live].sort((a, b) => a.at - b.at).slice(-MAX_HISTORY);
  return withHistory(s, { entries, readAt: Math.max(readAt, s.notificationHistory.readAt) });
}

function withHistory<S extends HistoryHolder>(s: S, change: Partial<NotificationHistory>): S {
  return { ...s, notificationHistory: { ...s.notificationHistory, ...change } };
}

/** Opening the list marks everything in it read. */
export function openHistory<S extends HistoryHolder>(s: S, at: number): S {
  return withHistory(s, { open: true, readAt: Math.max(at, ...s.notificationHistory.entries.map((e) => e.at)) });
}

export function closeHistory<S extends HistoryHolder>(s: S): S {
  return withHistory(s, { open: false });
}

export function clearHistory<S extends HistoryHolder>(s: S): S {
  return withHistory(s, { entries: [] });
}
