/**
 * The safe button of a confirmation takes focus once the dialog is open: Dialog's showModal() focuses the first
 * button, the destructive one, whatever autoFocus says. `key` re-runs it when the dialog shows another question.
 */
import { useEffect, useRef } from 'react';

export function useSafeFocus(key?: unknown) {
  const safe = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const frame = requestAnimationFrame(() => safe.current?.focus());
    return () => cancelAnimationFrame(frame);
  }, [key]);
  return safe;
}
