/**
 * The OS ports `gpu-share serve` gives the core. There is no desktop: the core already sends every
 * notification to the open pages (in-page toast, browser notification), so the notifier only logs a line
 * for whoever watches the terminal, and the tray does nothing.
 */
import type { UserNotification } from '../../src-shared/training';
import type { Notifier, TrayPort } from '../platform/ports';

export function logNotifier(write: (line: string) => void): Notifier {
  return {
    notify(n: UserNotification) {
      const tag = n.severity === 'error' ? 'error' : n.severity === 'warning' ? 'warning' : 'info';
      write(`[${tag}] ${n.title} — ${n.body}\n`);
    },
  };
}

export const noTray: TrayPort = {
  setAttention() {
    // No tray without a desktop.
  },
};
