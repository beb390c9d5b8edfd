// Issue 17 defect 8: every toast's notification is kept in a bounded history after the toast is gone, with an
// unread count that opening the list clears.
import { describe, expect, it } from 'vitest';
import type { UserNotification } from '../../../src-shared/training';
import { dismissToast, pushToast } from '../../../src-renderer/store/actions';
import { clearHistory, closeHistory, MAX_HISTORY, openHistory, seedHistory, unreadCount } from '../../../src-renderer/features/notifications/notification-history-model';
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

describe('notification history from the app (issue 25 item 4)', () => {
  const kept = (seq: number, at: number, n: UserNotification) => ({ seq, at, notification: n });

  it('a reload shows what the app kept, read before stays read, cleared stays cleared', () => {
    const log = [kept(1, 10, note('a')), kept(2, 20, note('b')), kept(3, 30, note('c'))];
    let s = seedHistory(initialState(), log, 0);
    expect(s.notificationHistory.entries.map((e) => [e.id, e.at, e.notification.title])).toEqual([
      ['kept-1', 10, 'ta'],
      ['kept-2', 20, 'tb'],
      ['kept-3', 30, 'tc'],
    ]);
    expect(unreadCount(s.notificationHistory)).toBe(3);
    expect(unreadCount(seedHistory(initialState(), log, 20).notificationHistory)).toBe(1);
    expect(seedHistory(initialState(), log, 0, 20).notificationHistory.entries.map((e) => e.id)).toEqual(['kept-3']);
    // No toast for what was kept.
    expect(s.toasts).toEqual([]);
    s = openHistory(s, 35);
    expect(unreadCount(seedHistory(s, log, 0).notificationHistory)).toBe(0);
  });

  it('a live entry the app also kept is one entry; one it has not kept yet stays; ids that repeat after a restart do not merge', () => {
    let s = pushToast(initialState(), note('n1'), 40);
    s = pushToast(s, note('n2'), 50);
    const restarted = { ...note('n1'), title: 'said before the restart' };
    s = seedHistory(s, [kept(1, 5, restarted), kept(2, 39, note('n1'))], 0);
    expect(s.notificationHistory.entries.map((e) => [e.id, e.notification.title])).toEqual([
      ['kept-1', 'said before the restart'],
      ['kept-2', 'tn1'],
      ['n2', 'tn2'],
    ]);
  });
});
