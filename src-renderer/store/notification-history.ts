/**
 * What the toasts said, kept after they fade: toasts are bounded and go away on their own (issue 17 defect 8),
 * so a person who looked away needs a place to read them again — the bell in the header opens this list.
 * Newest last, bounded; "unread" is what arrived since the list was last opened. Pure transitions.
 */
import type { UserNotification } from '../../src-shared/training';
import type { AppState, Toast } from './state';

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

/** A notification goes into the history (a repeat of the same id replaces the older entry). */
export function recordNotification(h: NotificationHistory, notification: UserNotification, at: number): NotificationHistory {
  const entries = [...h.entries.filter((e) => e.id !== notification.id), { id: notification.id, notification, at }];
  return { ...h, entries: entries.length > MAX_HISTORY ? entries.slice(entries.length - MAX_HISTORY) : entries };
}

export function unreadCount(h: NotificationHistory): number {
  return h.entries.filter((e) => e.at > h.readAt).length;
}

function withHistory(s: AppState, change: Partial<NotificationHistory>): AppState {
  return { ...s, notificationHistory: { ...s.notificationHistory, ...change } };
}

/** Opening the list marks everything in it read. */
export function openHistory(s: AppState, at: number): AppState {
  return withHistory(s, { open: true, readAt: Math.max(at, ...s.notificationHistory.entries.map((e) => e.at)) });
}

export function closeHistory(s: AppState): AppState {
  return withHistory(s, { open: false });
}

export function clearHistory(s: AppState): AppState {
  return withHistory(s, { entries: [] });
}
