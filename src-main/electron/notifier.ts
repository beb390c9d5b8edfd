/**
 * The core's Notifier as native notifications: a click brings the window forward and asks the page to show
 * the notification's target (onFocus). Warnings and errors also mark the tray, which stays marked until the
 * window is looked at, for the user who missed the notification.
 */
import { Notification } from 'electron';
import type { UserNotification } from '../../src-shared/training';
import type { Notifier, TrayPort } from '../platform/ports';

export interface ElectronNotifierOptions {
  /** Shows, restores and focuses the main window. */
  showWindow(): void;
  /** Sends onFocus to the page. */
  focusTarget(target: NonNullable<UserNotification['target']>): void;
  tray?: TrayPort;
  iconPath?: string;
}

/** Notifications kept alive until clicked or closed (an unreferenced one can lose its click handler). */
const MAX_LIVE = 20;

export function createElectronNotifier(options: ElectronNotifierOptions): Notifier {
  const live = new Set<Notification>();
  return {
    notify(notification) {
      if (notification.severity !== 'info') options.tray?.setAttention(`${notification.title}: ${notification.body}`);
      if (!Notification.isSupported()) return;
      const native = new Notification({
        title: notification.title,
        body: notification.body,
        silent: notification.severity === 'info',
        urgency: notification.severity === 'error' ? 'critical' : 'normal',
        ...(options.iconPath ? { icon: options.iconPath } : {}),
      });
      const release = (): void => {
        live.delete(native);
      };
      native.on('click', () => {
        release();
        options.showWindow();
        if (notification.target) options.focusTarget(notification.target);
      });
      native.on('close', release);
      live.add(native);
      if (live.size > MAX_LIVE) {
        const oldest = live.values().next().value;
        if (oldest) live.delete(oldest);
      }
      native.show();
    },
  };
}
