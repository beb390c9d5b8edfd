/**
 * In-page notifications (worker failed, run paused…): announced through a live region, clickable to go to
 * what they are about. Information fades after a while; warnings and errors stay until dismissed.
 */
import { useEffect } from 'react';
import type { Toast } from '../store/state';
import { dismissToast, focusTarget } from '../store/actions';
import { act, useApp } from '../store/app-store';
import { CloseIcon, ErrorIcon, InfoIcon, WarningIcon } from './icons';

const INFO_TOAST_MS = 8000;

function ToastItem({ toast }: { toast: Toast }) {
  const { notification } = toast;
  useEffect(() => {
    if (notification.severity !== 'info') return undefined;
    const t = setTimeout(() => act(dismissToast, toast.id), INFO_TOAST_MS);
    return () => clearTimeout(t);
  }, [toast.id, notification.severity]);
  const Icon = notification.severity === 'error' ? ErrorIcon : notification.severity === 'warning' ? WarningIcon : InfoIcon;
  const target = notification.target;
  const open = () => {
    if (target) act(focusTarget, target);
    act(dismissToast, toast.id);
  };
  return (
    <li className={`toast tone-${notification.severity === 'error' ? 'bad' : notification.severity === 'warning' ? 'warn' : 'info'}`} data-toast-id={toast.id} data-severity={notification.severity}>
      <Icon className="toast-icon" size={18} />
      <div className="toast-text">
        {target ? (
          <button type="button" className="toast-title link-button" onClick={open}>
            {notification.title}
          </button>
        ) : (
          <p className="toast-title">{notification.title}</p>
        )}
        <p className="toast-body">{notification.body}</p>
      </div>
      <button type="button" className="icon-button" aria-label={`Dismiss: ${notification.title}`} onClick={() => act(dismissToast, toast.id)}>
        <CloseIcon />
      </button>
    </li>
  );
}

export function Toasts() {
  const toasts = useApp((s) => s.toasts);
  return (
    <section className="toasts" aria-label="Notifications">
      <ol aria-live="polite" aria-relevant="additions text">
        {toasts.map((t) => (
          <ToastItem key={t.id} toast={t} />
        ))}
      </ol>
    </section>
  );
}
