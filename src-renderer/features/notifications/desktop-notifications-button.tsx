/**
 * Desktop notifications for the headless page: a button that asks (browsers only allow asking from a click),
 * and, when the browser or the OS refused, a note that says so and how to allow them — the button used to just
 * vanish (issue 17 defect 12), so a person could not tell "off" from "on". The note closes on Escape or a click
 * outside it, as the bell's list does (issue 25 item 4), and gives focus back to its button.
 */
import { useEffect, useRef, useState, type RefObject } from 'react';
import { notificationPermission, requestNotificationPermission, type Permission } from './desktop-notifications';
import { BellIcon } from '../../ui/icons';

export const BLOCKED_HINT =
  "This browser blocks notifications for this page: allow them in the site's settings (the icon left of the address), and in the system's notification settings for the browser, then reload.";

/** Calls `close` on Escape or a press outside `root` while `open`. */
function useDismiss(open: boolean, root: RefObject<HTMLElement | null>, close: () => void): void {
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') close();
    };
    const onDown = (e: MouseEvent) => {
      if (!root.current?.contains(e.target as Node)) close();
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('mousedown', onDown);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('mousedown', onDown);
    };
  }, [open, root, close]);
}

export function DesktopNotificationsButton() {
  const [permission, setPermission] = useState<Permission>(notificationPermission);
  const [explain, setExplain] = useState(false);
  const root = useRef<HTMLSpanElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const close = useRef(() => {
    setExplain(false);
    button.current?.focus();
  }).current;
  useDismiss(explain, root, close);
  if (permission === 'default') {
    return (
      // Short words, so the header stays one row at 1280 px; the title says where they appear.
      <button
        type="button"
        className="button small ghost"
        data-testid="desktop-notifications"
        data-permission={permission}
        title="Enable desktop notifications: the system shows runs and workers that need you while this page is in the background"
        onClick={() => void requestNotificationPermission().then(setPermission)}
      >
        <BellIcon /> Enable notifications
      </button>
    );
  }
  if (permission === 'denied') {
    return (
      <span className="desktop-notifications-blocked" data-testid="desktop-notifications" data-permission={permission} ref={root}>
        {/* Short words, as above; the name read out says which notifications. */}
        <button type="button" ref={button} className="button small ghost" aria-label="Desktop notifications blocked" aria-expanded={explain} onClick={() => setExplain(!explain)} title={BLOCKED_HINT}>
          <BellIcon /> Notifications blocked
        </button>
        {explain && (
          <span className="desktop-notifications-hint small" role="note">
            {BLOCKED_HINT}
          </span>
        )}
      </span>
    );
  }
  return null;
}
