/**
 * Zoom by range select on a chart (issue 25, "zoom on every chart"): drag across the plot to show that x range
 * alone, double-click or Reset (a button, so the keyboard reaches it; Escape on the focused chart too) to show it
 * all again. Pointer positions are in the chart's viewBox units; `invert` turns them into x values.
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
