/**
 * In a window narrow enough that a view's columns stack (900 px and less), what a click on a list opened can land
 * far below the list: the Runs view's run page sat ~1,300 px down under the Start form, so a click seemed to do
 * nothing (issue 25 item 3). When the element mounts out of sight in a stacked layout, it is scrolled into view.
 */
import { useEffect, type RefObject } from 'react';

/** The width at and under which the views' columns stack (app.css's `max-width: 900px` block). */
export const STACKED_QUERY = '(max-width: 900px)';

export function useRevealWhenStacked(ref: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof window.matchMedia !== 'function' || !window.matchMedia(STACKED_QUERY).matches) return;
    const top = el.getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight * 0.6) el.scrollIntoView({ block: 'start', behavior: 'auto' });
  }, [ref]);
}
