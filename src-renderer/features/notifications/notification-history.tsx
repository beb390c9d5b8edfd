/**
 * The bell in the header and the list it opens: every notification the toasts showed, newest first, with its
 * time, kept after the toast faded (issue 17: "a notifications history"). The count on the bell is what arrived
 * since the list was last opened (in this browser: the time is kept across reloads, and the entries are the app's,
 * kept in its state database, so a reload shows them again). The list closes on Escape or a click outside, and gives focus back to the bell.
 */
import { useEffect, useRef } from 'react';
import { formatClock } from '../../ui/format';
import { focusTarget } from '../../store/actions';
import { act, useApp } from '../../store/app-store';
import { clearHistory, closeHistory, unreadCount } from './notification-history-model';
import { openBellList, storeClearedAt } from './notification-load';
import { BellIcon, ErrorIcon, InfoIcon, WarningIcon } from '../../ui/icons';

function HistoryPanel({ onClose }: { onClose: () => void }) {
  const entries = useApp((s) => s.notificationHistory.entries);
  const panel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    panel.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    const onDown = (e: MouseEvent) => {
      const el = e.target as HTMLElement | null;
      if (el && !el.closest('.notification-center')) onClose();
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('mousedown', onDown);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('mousedown', onDown);
    };
  }, [onClose]);
  const newestFirst = [...entries].reverse();
  return (
    <div className="notification-panel" role="dialog" aria-label="Notifications" tabIndex={-1} ref={panel} data-testid="notification-history">
      <div className="notification-panel-head">
        <h2 className="card-title">Notifications</h2>
        <span className="muted small">{entries.length === 0 ? 'none yet' : `${entries.length}, newest first`}</span>
        {entries.length > 0 && (
          <button
            type="button"
            className="button small ghost"
            onClick={() => {
              storeClearedAt(Math.max(...entries.map((e) => e.at)));
              act(clearHistory);
            }}
          >
            Clear
          </button>
        )}
      </div>
      {entries.length === 0 ? (
        <p className="muted small">What the in-page notifications said shows here after they fade.</p>
      ) : (
        <ol className="notification-list">
          {newestFirst.map((e) => {
            const n = e.notification;
            const Icon = n.severity === 'error' ? ErrorIcon : n.severity === 'warning' ? WarningIcon : InfoIcon;
            const tone = n.severity === 'error' ? 'bad' : n.severity === 'warning' ? 'warn' : 'info';
            return (
              <li key={e.id} className={`notification-entry sev-${tone}`} data-severity={n.severity}>
                <Icon className="toast-icon" size={16} />
                <div className="notification-entry-text">
                  <p className="notification-entry-head">
                    {n.target ? (
                      <button
                        type="button"
                        className="link-button strong"
                        onClick={() => {
                          act(focusTarget, n.target!);
                          onClose();
                        }}
                      >
                        {n.title}
                      </button>
                    ) : (
                      <span className="strong">{n.title}</span>
                    )}
                    <time className="muted small" dateTime={new Date(e.at).toISOString()}>
                      {formatClock(e.at)}
                    </time>
                  </p>
                  <p className="small muted">{n.body}</p>
                </div>
              </li>
            );
          })}
        </ol>
      )}
    </div>
  );
}

export function NotificationCenter() {
  const history = useApp((s) => s.notificationHistory);
  const unread = unreadCount(history);
  const bell = useRef<HTMLButtonElement>(null);
  const close = useRef(() => {
    act(closeHistory);
    bell.current?.focus();
  }).current;
  return (
    <div className="notification-center">
      <button
        type="button"
        ref={bell}
        className="button small ghost notification-bell"
        aria-expanded={history.open}
        aria-label={unread > 0 ? `Notifications, ${unread} new` : 'Notifications'}
        title="Notifications: what the toasts said"
        data-testid="notification-bell"
        data-unread={unread}
        onClick={() => (history.open ? close() : openBellList())}
      >
        <BellIcon />
        {unread > 0 && <span className="notification-count">{unread > 99 ? '99+' : unread}</span>}
      </button>
      {history.open && <HistoryPanel onClose={close} />}
    </div>
  );
}
