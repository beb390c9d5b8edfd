/**
 * Desktop notifications for the headless page: a button that asks (browsers only allow asking from a click),
 * and, when the browser or the OS refused, a note that says so and how to allow them — the button used to just
 * vanish (issue 17 defect 12), so a person could not tell "off" from "on".
 */
import { useState } from 'react';
import { notificationPermission, requestNotificationPermission, type Permission } from '../desktop-notifications';
import { BellIcon } from './icons';

export const BLOCKED_HINT =
  "This browser blocks notifications for this page: allow them in the site's settings (the icon left of the address), and in the system's notification settings for the browser, then reload.";

export function DesktopNotificationsButton() {
  const [permission, setPermission] = useState<Permission>(notificationPermission);
  const [explain, setExplain] = useState(false);
  if (permission === 'default') {
    return (
      <button type="button" className="button small ghost" data-testid="desktop-notifications" data-permission={permission} onClick={() => void requestNotificationPermission().then(setPermission)}>
        <BellIcon /> Enable desktop notifications
      </button>
    );
  }
  if (permission === 'denied') {
    return (
      <span className="desktop-notifications-blocked" data-testid="desktop-notifications" data-permission={permission}>
        <button type="button" className="button small ghost" aria-expanded={explain} onClick={() => setExplain(!explain)} title={BLOCKED_HINT}>
          <BellIcon /> Desktop notifications blocked
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
