// Issue 17 defect 8: every toast's notification is kept in a bounded history after the toast is gone, with an
// unread count that opening the list clears.
import { describe, expect, it } from 'vitest';
import type { UserNotification } from '../../../src-shared/training';
import { dismissToast, pushToast } from '../../../src-renderer/store/actions';
import { clearHistory, closeHistory, MAX_HISTORY, openHistory, unreadCount } from '../../../src-renderer/store/notification-history';
import { initialState } from '../../../src-renderer/store/state';

const note = (id: string): UserNotification => ({ id, title: `t${id}`, body: 'b', severity: 'info' });

describe('notification history', () => {
  it('keeps what a toast said after it is dismissed, and counts the unread', () => {
    let s = pushToast(initialState(), note('a'), 10);
    s = pushToast(s, note('b'), 20);
    s = dismissToast(dismissToast(s, 'a'), 'b');
    expect(s.toasts).toEqual([]);
    expect(s.notificationHistory.entries.map((e) => [e.id, e.at, e.notification.title])).toEqual([
      ['a', 10, 'ta'],
      ['b', 20, 'tb'],
    ]);
    expect(unreadCount(s.notificationHistory)).toBe(2);
    s = openHistory(s, 25);
    expect([s.notificationHistory.open, unreadCount(s.notificationHistory)]).toEqual([true, 0]);
    s = pushToast(closeHistory(s), note('c'), 30);
    expect([s.notificationHistory.open, unreadCount(s.notificationHistory)]).toEqual([false, 1]);
    expect(clearHistory(s).notificationHistory.entries).toEqual([]);
  });

  it('is bounded, oldest dropped, and a repeated id replaces its entry', () => {
    let s = initialState();
    for (let i = 0; i < MAX_HISTORY + 5; i++) s = pushToast(s, note(String(i)), i);
    expect(s.notificationHistory.entries).toHaveLength(MAX_HISTORY);
    expect(s.notificationHistory.entries[0]!.id).toBe('5');
    s = pushToast(s, note('5'), 999);
    expect(s.notificationHistory.entries.filter((e) => e.id === '5')).toHaveLength(1);
    expect(s.notificationHistory.entries.at(-1)).toMatchObject({ id: '5', at: 999 });
  });
});
