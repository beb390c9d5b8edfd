/**
 * The bell's list at load: the app's kept notifications (getNotifications), when this browser last opened the
 * list (so a reload does not count old entries as new) and when it last cleared it (so Clear lasts past a
 * reload); both times are kept in localStorage, written by opening and clearing the list.
 */
import type { GpuShareApi } from '../../../src-shared/ipc';
import { apply, type AppStore } from '../../store/apply';
import { act, appStore } from '../../store/app-store';
import { openHistory, seedHistory } from './notification-history-model';

const READ_AT_KEY = 'gpu-share:notifications-read-at';
const CLEARED_AT_KEY = 'gpu-share:notifications-cleared-at';

function storedTime(key: string): number {
  try {
    const value = Number(globalThis.localStorage?.getItem(key));
    return Number.isFinite(value) && value > 0 ? value : 0;
  } catch {
    return 0;
  }
}

function storeTime(key: string, at: number): void {
  try {
    globalThis.localStorage?.setItem(key, String(at));
  } catch {
    // Private windows may refuse storage: the list still works, only the unread count and Clear start over.
  }
}

/** When this browser last opened the bell's list (0: never, or storage unavailable). */
export const storedReadAt = (): number => storedTime(READ_AT_KEY);
export const storeReadAt = (at: number): void => storeTime(READ_AT_KEY, at);
/** The newest entry this browser cleared from the list: older kept entries are not shown again. */
export const storedClearedAt = (): number => storedTime(CLEARED_AT_KEY);
export const storeClearedAt = (at: number): void => storeTime(CLEARED_AT_KEY, at);

/** Fetches the kept notifications into the list; never throws (an older core has none: the list starts empty). */
export async function loadNotifications(api: GpuShareApi, store: AppStore): Promise<void> {
  try {
    apply(store, seedHistory, await api.getNotifications(), storedReadAt(), storedClearedAt());
  } catch {
    // An older core without the channel: the list holds what arrives from now on.
  }
}

/** Opens the bell's list (the bell, or a toast stack's "+N more") and remembers, in this browser, that it was read. */
export function openBellList(): void {
  act(openHistory, Date.now());
  storeReadAt(appStore.getState().notificationHistory.readAt);
}
