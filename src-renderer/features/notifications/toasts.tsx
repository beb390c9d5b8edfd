/**
 * In-page notifications (worker failed, run paused…): announced through a live region, clickable to go to
 * what they are about. They must not pile up over the page (issue 17 defect 8): the newest few show, the rest
 * are counted ("+2 more", which opens the notifications list), and every one fades on its own — errors last
 * longest — or is closed. Hovering or focusing the stack holds the fading, so nothing goes while being read.
 * Whatever they said stays in the notifications list behind the bell (notification-history.ts). At every window
 * width the shown toasts take a strip of their own at the bottom while they show (styles/toasts.css), and the page
 * scrolls above it: no spot is free of cards in every view at every width (a floating stack covered node cards,
 * tables and the runs list between 901 and 1180 px and above), so they cover no card anywhere (issue 17).
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { EventSeverity } from '../../../src-shared/training';
import type { Toast } from '../../store/state';
import { dismissToast, focusTarget } from '../../store/actions';
import { act, useApp } from '../../store/app-store';
import { openBellList } from './notification-load';
import { CloseIcon, ErrorIcon, InfoIcon, WarningIcon } from '../../ui/icons';

/** Toasts shown at once; the others wait, counted. */
export const VISIBLE_TOASTS = 3;

/** How long a toast stays before it fades, by severity. */
export const TOAST_MS: Record<EventSeverity, number> = { info: 6000, warning: 12_000, error: 30_000 };

/** After the stack is let go of, a toast that was due while held gets this long more. */
const RELEASE_GRACE_MS = 2000;

function dueAt(t: Toast, releasedAt: number): number {
  return Math.max(t.at + (TOAST_MS[t.notification.severity] ?? TOAST_MS.info), releasedAt + RELEASE_GRACE_MS);
}

/** Fades every toast when its time is up (shown or still counted in "+N more"), unless the stack is held. */
function useFading(toasts: Toast[], held: boolean, releasedAt: number): void {
  useEffect(() => {
    if (held || toasts.length === 0) return undefined;
    const next = Math.min(...toasts.map((t) => dueAt(t, releasedAt)));
    const timer = setTimeout(() => {
      const now = Date.now();
      for (const t of toasts) if (dueAt(t, releasedAt) <= now) act(dismissToast, t.id);
    }, Math.max(0, next - Date.now()));
    return () => clearTimeout(timer);
  }, [toasts, held, releasedAt]);
}

/**
 * While the strip is on, the page scrolls inside <main> instead of the document (and back when it goes). The same
 * offset in either scroller keeps every part of the page where the reader saw it across the switch (only the header
 * comes back over what was above the view, and the strip takes the window's bottom): nothing jumps when the first
 * toast comes or the last one fades. The offset is read during render, before the layout changes.
 */
function useScrollKeptAcrossStrip(on: boolean): void {
  const was = useRef(false);
  const saved = useRef(0);
  const main = typeof document === 'undefined' ? null : document.getElementById('main');
  if (on !== was.current) saved.current = was.current ? (main?.scrollTop ?? 0) : window.scrollY;
  useLayoutEffect(() => {
    if (on === was.current) return;
    was.current = on;
    const el = document.getElementById('main');
    if (!el) return;
    if (on) el.scrollTop = saved.current;
    else window.scrollTo(0, saved.current);
  }, [on]);
}

function ToastItem({ toast }: { toast: Toast }) {
  const { notification } = toast;
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
          <button type="button" className="toast-title link-button" onClick={open} title={notification.title}>
            {notification.title}
          </button>
        ) : (
          <p className="toast-title" title={notification.title}>
            {notification.title}
          </p>
        )}
        <p className="toast-body" title={notification.body}>
          {notification.body}
        </p>
      </div>
      <button type="button" className="icon-button" aria-label={`Dismiss: ${notification.title}`} onClick={() => act(dismissToast, toast.id)}>
        <CloseIcon />
      </button>
    </li>
  );
}

export function Toasts() {
  const toasts = useApp((s) => s.toasts);
  const [held, setHeldState] = useState(false);
  const [releasedAt, setReleasedAt] = useState(0);
  const setHeld = (h: boolean) => {
    setHeldState(h);
    if (!h) setReleasedAt(Date.now());
  };
  useFading(toasts, held, releasedAt);
  const shown = toasts.slice(-VISIBLE_TOASTS);
  const more = toasts.length - shown.length;
  const strip = shown.length > 0;
  useScrollKeptAcrossStrip(strip);
  return (
    <section
      className="toasts"
      aria-label="Notifications"
      data-testid="toasts"
      data-count={toasts.length}
      data-strip={strip ? 'true' : undefined}
      onMouseEnter={() => setHeld(true)}
      onMouseLeave={() => setHeld(false)}
      onFocus={() => setHeld(true)}
      onBlur={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setHeld(false);
      }}
    >
      <ol aria-live="polite" aria-relevant="additions text">
        {shown.map((t) => (
          <ToastItem key={t.id} toast={t} />
        ))}
      </ol>
      {more > 0 && (
        <button type="button" className="button small toasts-more" data-testid="toasts-more" onClick={openBellList}>
          +{more} more
        </button>
      )}
    </section>
  );
}
