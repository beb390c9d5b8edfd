/**
 * Zoom by range select on a chart (issue 25, "zoom on every chart"): drag across the plot to show that x range
 * alone, double-click or Reset (a button, so the keyboard reaches it; Escape on the focused chart too) to show it
 * all again. Pointer positions are in the chart's viewBox units; `invert` turns them into x values. The keyboard
 * does the same on a focused chart (keyZoomStep): arrows move a cursor, Shift+arrows select a range, Enter zooms.
 */
import { useState, type PointerEvent } from 'react';

/** A drag narrower than this (viewBox units) is a click or a wobble, not a range. */
export const MIN_DRAG = 6;

export interface ChartZoom {
  /** The x range shown, or null: all of it. */
  zoom: [number, number] | null;
  /** The range being dragged (viewBox x of where it began and where the pointer is), or null. */
  drag: { from: number; to: number } | null;
  reset(): void;
  /** Shows the x range [a, b] alone (the keyboard's Enter). */
  zoomTo(a: number, b: number): void;
  onPointerDown(e: PointerEvent<SVGSVGElement>, px: number): void;
  /** True while a drag is under way (the caller's hover readout waits). */
  onPointerMove(px: number): boolean;
  onPointerUp(px: number, invert: (px: number) => number): void;
}

export function useChartZoom(): ChartZoom {
  const [zoom, setZoom] = useState<[number, number] | null>(null);
  const [drag, setDrag] = useState<{ from: number; to: number } | null>(null);
  return {
    zoom,
    drag,
    reset: () => {
      setZoom(null);
      setDrag(null);
    },
    zoomTo: (a, b) => {
      if (Number.isFinite(a) && Number.isFinite(b) && b > a) setZoom([a, b]);
    },
    onPointerDown(e, px) {
      if (e.button !== 0) return;
      e.preventDefault(); // no text selection while dragging
      e.currentTarget.setPointerCapture?.(e.pointerId);
      setDrag({ from: px, to: px });
    },
    onPointerMove(px) {
      if (!drag) return false;
      setDrag({ from: drag.from, to: px });
      return true;
    },
    onPointerUp(px, invert) {
      if (!drag) return;
      setDrag(null);
      if (Math.abs(px - drag.from) < MIN_DRAG) return;
      const [a, b] = [invert(Math.min(px, drag.from)), invert(Math.max(px, drag.from))];
      if (Number.isFinite(a) && Number.isFinite(b) && b > a) setZoom([a, b]);
    },
  };
}

/** The keyboard's cursor on a chart: the point at index `at` of the followed series, and with Shift a range from `anchor` to it. */
export interface KeyCursor {
  at: number | null;
  anchor: number | null;
}

export interface KeyOutcome {
  cursor: KeyCursor;
  /** Zoom to this x range, or show all of it again. */
  zoom?: [number, number] | 'reset';
  /** The key was the chart's (the page must not scroll or act on it). */
  handled: boolean;
}

/** Indices of `xs` inside `range` (all of them without one): where the cursor may go. */
function visibleSpan(xs: readonly number[], range: [number, number] | null): [number, number] | null {
  if (xs.length === 0) return null;
  if (!range) return [0, xs.length - 1];
  const lo = xs.findIndex((x) => x >= range[0]);
  let hi = xs.length - 1;
  while (hi >= 0 && xs[hi]! > range[1]) hi--;
  return lo === -1 || hi < lo ? null : [lo, hi];
}

/**
 * A key on a focused chart (issue 25: zoom by keyboard): ←/→ move the cursor a point (Home/End to the ends of what is
 * shown, PageUp/PageDown a tenth of it), with Shift they stretch a range from where the cursor was; Enter zooms to
 * that range; Escape clears the range, else shows all of it again. `xs` are the followed series' x values (sorted),
 * `range` the x range shown now.
 */
export function keyZoomStep(key: string, shift: boolean, c: KeyCursor, xs: readonly number[], range: [number, number] | null): KeyOutcome {
  const span = visibleSpan(xs, range);
  if (key === 'Escape') {
    if (c.anchor !== null) return { cursor: { at: c.at, anchor: null }, handled: true };
    return { cursor: { at: null, anchor: null }, zoom: 'reset', handled: true };
  }
  if (key === 'Enter') {
    if (c.anchor === null || c.at === null || c.anchor === c.at) return { cursor: c, handled: false };
    const [a, b] = [Math.min(c.anchor, c.at), Math.max(c.anchor, c.at)];
    return { cursor: { at: c.at, anchor: null }, zoom: [xs[a]!, xs[b]!], handled: true };
  }
  if (!span) return { cursor: c, handled: false };
  const [lo, hi] = span;
  const page = Math.max(1, Math.round((hi - lo) / 10));
  const moves: Record<string, (from: number) => number> = {
    ArrowRight: (from) => from + 1,
    ArrowLeft: (from) => from - 1,
    PageDown: (from) => from + page,
    PageUp: (from) => from - page,
    Home: () => lo,
    End: () => hi,
  };
  const move = moves[key];
  if (!move) return { cursor: c, handled: false };
  const forward = key === 'ArrowRight' || key === 'PageDown' || key === 'End';
  // No cursor yet (or one off what is shown): start just outside the shown span, so the first step lands on its edge.
  const from = c.at !== null && c.at >= lo && c.at <= hi ? c.at : forward ? lo - 1 : hi + 1;
  const at = Math.min(hi, Math.max(lo, move(from)));
  const anchor = shift ? (c.anchor ?? (c.at !== null && c.at >= lo && c.at <= hi ? c.at : at)) : null;
  return { cursor: { at, anchor }, handled: true };
}
