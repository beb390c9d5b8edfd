// Issue 25, "zoom and range select on every chart" from the keyboard: on a focused chart the arrows walk the points
// shown, Shift stretches a range from where the cursor was, Enter zooms to it, Escape clears the range and then the zoom.
import { describe, expect, it } from 'vitest';
import { keyZoomStep, type KeyCursor } from '../../../src-renderer/charts/chart-zoom';

const xs = Array.from({ length: 30 }, (_, i) => i); // steps 0..29
const none: KeyCursor = { at: null, anchor: null };

/** Presses `keys` in order ("Shift+ArrowLeft" for a shifted one), returning the last outcome and the zoom applied. */
function press(keys: string[], start: KeyCursor = none, range: [number, number] | null = null) {
  let cursor = start;
  let zoom = range;
  let last = null as ReturnType<typeof keyZoomStep> | null;
  for (const k of keys) {
    const [shift, key] = k.startsWith('Shift+') ? [true, k.slice(6)] : [false, k];
    last = keyZoomStep(key, shift, cursor, xs, zoom);
    cursor = last.cursor;
    if (last.zoom === 'reset') zoom = null;
    else if (last.zoom) zoom = last.zoom;
  }
  return { last: last!, cursor, zoom };
}

describe('keyZoomStep', () => {
  it.each([
    ['the first → lands on the first point shown', ['ArrowRight'], 0],
    ['the first ← lands on the last point shown', ['ArrowLeft'], 29],
    ['End and Home go to the ends', ['End', 'Home'], 0],
    ['the cursor stops at the ends', ['Home', 'ArrowLeft', 'ArrowLeft'], 0],
    ['PageDown moves a tenth of what is shown', ['Home', 'PageDown'], 3],
  ])('%s', (_name, keys, at) => {
    const { cursor } = press(keys);
    expect(cursor).toEqual({ at, anchor: null });
  });

  it('Shift+arrows select from where the cursor was; Enter zooms to that range and ends the selection', () => {
    const sel = press(['End', 'Shift+ArrowLeft', 'Shift+ArrowLeft', 'Shift+ArrowLeft']);
    expect(sel.cursor).toEqual({ at: 26, anchor: 29 });
    const zoomed = press(['Enter'], sel.cursor);
    expect(zoomed.last).toMatchObject({ handled: true, zoom: [26, 29] });
    expect(zoomed.cursor.anchor).toBeNull();
  });

  it('within a zoom the cursor walks only the points shown', () => {
    expect(press(['ArrowRight'], none, [10, 20]).cursor.at).toBe(10);
    expect(press(['End', 'ArrowRight'], none, [10, 20]).cursor.at).toBe(20);
    // A cursor left outside what is shown starts again at the shown edge.
    expect(press(['ArrowLeft'], { at: 2, anchor: null }, [10, 20]).cursor.at).toBe(20);
  });

  it('Escape clears a selection first, then shows all of it again', () => {
    const first = press(['Escape'], { at: 5, anchor: 8 }, [0, 29]);
    expect(first.last).toEqual({ cursor: { at: 5, anchor: null }, handled: true });
    const second = press(['Escape'], first.cursor, [3, 9]);
    expect(second.last.zoom).toBe('reset');
    expect(second.cursor).toEqual({ at: null, anchor: null });
  });

  it('leaves keys that are not the chart\'s to the page', () => {
    expect(press(['Tab']).last.handled).toBe(false);
    expect(press(['Enter'], { at: 4, anchor: null }).last.handled).toBe(false); // nothing selected
    expect(press(['Enter'], { at: 4, anchor: 4 }).last.handled).toBe(false); // an empty range
    expect(keyZoomStep('ArrowRight', false, none, [], null).handled).toBe(false); // no points
  });
});
