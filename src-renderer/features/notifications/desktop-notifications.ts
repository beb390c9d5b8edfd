/**
 * Browser notifications for headless pages: asked for only on a click (browsers ignore or punish asking at
 * load), shown only while the page is not in front — in front, the in-page toast already says it.
 * In the desktop app the shell shows native notifications, so this stays off there.
 */
import type { UserNotification } from '../../../src-shared/training';

export type Permission = 'default' | 'granted' | 'denied' | 'unsupported';

export function notificationPermission(): Permission {
  if (typeof Notification === 'undefined') return 'unsupported';
  return Notification.permission;
}

/** Must be called from a user gesture (a button's click handler). */
export async function requestNotificationPermission(): Promise<Permission> {
  if (typeof Notification === 'undefined') return 'unsupported';
  try {
    return await Notification.requestPermission();
  } catch {
    return Notification.permission;
  }
}

export function showDesktopNotification(notification: UserNotification, onClick: () => void): void {
  if (notificationPermission() !== 'granted') return;
  if (document.visibilityState === 'visible' && document.hasFocus()) return;
  try {
    const n = new Notification(notification.title, { body: notification.body, tag: notification.id });
    n.onclick = () => {
      window.focus();
      onClick();
      n.close();
    };
  } catch {
    // Some browsers only allow notifications from a service worker; the toast still shows.
  }
}
