/**
 * Draws an xy-chart-model: axes with tick labels and axis titles, a line per series, a dashed vertical line per
 * generation mark with its label, and under the pointer (or keyboard focus: arrow keys walk the points) a
 * guide line, a dot and a readout of the values there. Drag across it to zoom to that x range, or from the keyboard
 * Shift+arrows then Enter; double-click, Reset or Escape shows all of it again (chart-zoom.ts). The readout (a live
 * region) says the range selected and the zoom. Inline SVG, no chart library, nothing fetched.
 */
import { useEffect, useId, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';
import { keyZoomStep, useChartZoom, type ChartZoom } from './chart-zoom';
import { pointAt, XY_H, XY_PLOT, XY_W, xyChart, type XyInput, type XyModel, type XySeries } from './xy-chart-model';

/** The element's width in CSS pixels, kept current as the layout changes (null before the first layout). */
function useWidth<T extends HTMLElement>(): [React.RefObject<T | null>, number | null] {
  const ref = useRef<T | null>(null);
  const [width, setWidth] = useState<number | null>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) setWidth(Math.round(entry.contentRect.width));
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

const axisStyle = { stroke: 'var(--border-strong)', strokeWidth: 1 };
const gridStyle = { stroke: 'var(--border)', strokeWidth: 1, strokeDasharray: '3 3' };
const labelStyle = { fill: 'var(--muted)', fontSize: 11, fontVariantNumeric: 'tabular-nums' } as const;

/** The tick lines and labels of both axes and their titles. */
function Axes({ model, xTitle, yTitle }: { model: XyModel; xTitle: string; yTitle: string }) {
  const W = model.width;
  const bottom = XY_H - XY_PLOT.bottom;
  return (
    <>
      {model.yTicks.map((t) => (
        <g key={`y${t.label}`}>
          <line x1={XY_PLOT.left} x2={W - XY_PLOT.right} y1={t.px} y2={t.px} style={gridStyle} />
          <text x={XY_PLOT.left - 6} y={t.px + 4} textAnchor="end" style={labelStyle}>
            {t.label}
          </text>
        </g>
      ))}
      <line x1={XY_PLOT.left} x2={W - XY_PLOT.right} y1={bottom} y2={bottom} style={axisStyle} />
      <line x1={XY_PLOT.left} x2={XY_PLOT.left} y1={XY_PLOT.top} y2={bottom} style={axisStyle} />
      {model.xTicks.map((t) => (
        <g key={`x${t.label}`}>
          <line x1={t.px} x2={t.px} y1={bottom} y2={bottom + 4} style={axisStyle} />
          <text x={t.px} y={bottom + 16} textAnchor="middle" style={labelStyle}>
            {t.label}
          </text>
        </g>
      ))}
      <text x={W - XY_PLOT.right} y={XY_H - 2} textAnchor="end" style={labelStyle}>
        {xTitle}
      </text>
      <text x={4} y={XY_PLOT.top} transform={`rotate(-90 4 ${XY_PLOT.top})`} textAnchor="end" dominantBaseline="hanging" style={labelStyle}>
        {yTitle}
      </text>
    </>
  );
}

/** The dashed line of each mark with its label (the hover title says what happened there). */
function Marks({ model }: { model: XyModel }) {
  const W = model.width;
  return (
    <>
      {model.marks.map((m) => {
        // A mark near the right edge (a part that ended with the run's last seconds) labels to its left.
        const flip = m.px > W - XY_PLOT.right - 50;
        return (
          <g key={`m${m.label}${m.px}`} className={`${m.kind}-mark-group`} data-mark-kind={m.kind}>
            <title>{m.title}</title>
            <line x1={m.px} x2={m.px} y1={XY_PLOT.top} y2={XY_H - XY_PLOT.bottom} className={`chart-mark chart-mark-${m.kind}`} />
            <text x={flip ? m.px - 3 : m.px + 3} y={XY_PLOT.top + 10} textAnchor={flip ? 'end' : 'start'} className={`chart-mark-label chart-mark-label-${m.kind}`}>
              {m.label}
            </text>
          </g>
        );
      })}
    </>
  );
}

/** An x value for the words the readout says: the axis' own labels where it has them ("−2 min"), else a few digits. */
function xWords(v: number, format: XyInput['xFormat']): string {
  if (format) return format(v, 1);
  return Number.isInteger(v) ? String(v) : v.toPrecision(4);
}

/** Pointer x in viewBox units (null: the chart has no size yet). */
function viewX(e: PointerEvent<SVGSVGElement>, W: number): number | null {
  const box = e.currentTarget.getBoundingClientRect();
  return box.width === 0 ? null : ((e.clientX - box.left) / box.width) * W;
}

export interface XyChartProps extends XyInput {
  /** Accessible name: what the chart shows and its range in words. */
  label: string;
  xTitle: string;
  yTitle: string;
  /** The series the readout follows (its points are what the pointer snaps to). */
  hoverSeries: XySeries;
  /** The readout's lines for the point at `index` of hoverSeries. */
  describe: (index: number) => string[];
  testId: string;
}

/**
 * The keyboard's range on a chart (keyZoomStep): from an anchor point to the cursor (the hover index) while
 * Shift+arrows stretch it, and what Enter or Escape did, said in the readout.
 */
function useKeyRange(props: XyChartProps, zoom: ChartZoom, setHover: (at: number | null) => void) {
  const [anchor, setAnchor] = useState<number | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const xs = props.hoverSeries.xs;
  const x = (v: number) => xWords(v, props.xFormat);
  return {
    range: (at: number | null): [number, number] | null => (anchor !== null && at !== null && anchor !== at ? [Math.min(anchor, at), Math.max(anchor, at)] : null),
    words: (range: [number, number] | null): string[] => [
      ...(said ? [said] : []),
      ...(range ? [`Selected ${props.xTitle} ${x(xs[range[0]]!)} to ${x(xs[range[1]]!)}: Enter zooms, Escape clears`] : []),
    ],
    clear: () => {
      setAnchor(null);
      setSaid(null);
    },
    onKey: (e: KeyboardEvent<SVGSVGElement>, at: number | null) => {
      const step = keyZoomStep(e.key, e.shiftKey, { at, anchor }, xs, zoom.zoom);
      if (!step.handled) return;
      e.preventDefault();
      setHover(step.cursor.at);
      setAnchor(step.cursor.anchor);
      if (step.zoom === 'reset') {
        zoom.reset();
        setSaid(zoom.zoom ? `Showing all of ${props.xTitle}` : null);
      } else if (step.zoom) {
        zoom.zoomTo(step.zoom[0], step.zoom[1]);
        setSaid(`Zoomed to ${props.xTitle} ${x(step.zoom[0])} to ${x(step.zoom[1])}: Escape shows all of it`);
      } else setSaid(null);
    },
  };
}

export function XyChart(props: XyChartProps) {
  const id = useId();
  const clipId = `${id.replace(/[^A-Za-z0-9_-]/g, '')}-plot`;
  const [hover, setHover] = useState<number | null>(null);
  const [ref, width] = useWidth<HTMLDivElement>();
  const zoom = useChartZoom();
  const keys = useKeyRange(props, zoom, setHover);
  const model = xyChart({ ...props, xZoom: zoom.zoom }, width ?? XY_W);
  if (!model) return <div ref={ref} />;
  const W = model.width;
  const bottom = XY_H - XY_PLOT.bottom;
  const series = props.hoverSeries;
  const at = hover !== null && hover >= 0 && hover < series.xs.length ? hover : null;
  const onPointer = (e: PointerEvent<SVGSVGElement>) => {
    const px = viewX(e, W);
    if (px === null || zoom.onPointerMove(px)) return;
    setHover(pointAt(model, series, px));
  };
  const keyRange = keys.range(at);
  const dotX = at !== null ? model.x.map(series.xs[at]!) : 0;
  const dotY = at !== null ? model.y.map(series.ys[at]!) : 0;
  const readout = [...keys.words(keyRange), ...(at !== null ? props.describe(at) : [])];
  // A drag, or the keyboard's range, in viewBox units.
  const drag = zoom.drag ?? (keyRange ? { from: model.x.map(series.xs[keyRange[0]!]!), to: model.x.map(series.xs[keyRange[1]!]!) } : null);
  return (
    <div ref={ref} className="xy-chart" data-testid={props.testId} data-points={series.xs.length} data-marks={model.marks.length} data-y-kind={props.yKind ?? 'linear'} data-x-min={model.x.min} data-x-max={model.x.max} data-zoomed={zoom.zoom ? 'true' : 'false'}>
      <svg
        viewBox={`0 0 ${W} ${XY_H}`}
        role="img"
        aria-label={zoom.zoom ? `${props.label}; zoomed to ${props.xTitle} ${model.x.min.toPrecision(4)} to ${model.x.max.toPrecision(4)}` : props.label}
        aria-describedby={`${id}-readout ${id}-keys`}
        tabIndex={0}
        onPointerDown={(e) => {
          const px = viewX(e, W);
          if (px !== null) zoom.onPointerDown(e, px);
        }}
        onPointerMove={onPointer}
        onPointerUp={(e) => zoom.onPointerUp(viewX(e, W) ?? 0, model.x.invert)}
        onPointerLeave={() => setHover(null)}
        onDoubleClick={zoom.reset}
        onKeyDown={(e) => keys.onKey(e, at)}
        onBlur={() => {
          setHover(null);
          keys.clear();
        }}
        style={{ touchAction: 'none', cursor: 'crosshair' }}
      >
        <defs>
          <clipPath id={clipId}>
            <rect x={XY_PLOT.left} y={XY_PLOT.top - 4} width={Math.max(0, W - XY_PLOT.left - XY_PLOT.right)} height={bottom - XY_PLOT.top + 8} />
          </clipPath>
        </defs>
        <Axes model={model} xTitle={props.xTitle} yTitle={props.yTitle} />
        <Marks model={model} />
        <g clipPath={`url(#${clipId})`}>
          {model.lines.map((l) => (
            <path key={l.key} d={l.path} data-series={l.key} className={l.faint ? 'chart-line chart-line-faint' : 'chart-line'} style={{ stroke: l.color }} />
          ))}
        </g>
        {/* Dots unclipped (one at the axis' end is drawn whole), but only those on the plot's x range (zoom). */}
        {model.lines.flatMap((l) =>
          (l.dots ?? []).flatMap((d, i) => (d.cx >= XY_PLOT.left - 1 && d.cx <= W - XY_PLOT.right + 1 ? [<circle key={`${l.key}-dot${i}`} cx={d.cx} cy={d.cy} r={3.5} className="chart-dot" style={{ fill: l.color }} />] : [])),
        )}
        {drag && Math.abs(drag.to - drag.from) > 0 && (
          <rect className="chart-select" data-testid={`${props.testId}-select`} x={Math.min(drag.from, drag.to)} y={XY_PLOT.top} width={Math.abs(drag.to - drag.from)} height={bottom - XY_PLOT.top} />
        )}
        {at !== null && !zoom.drag && (
          <g className="chart-hover" data-testid={`${props.testId}-hover`}>
            <line x1={dotX} x2={dotX} y1={XY_PLOT.top} y2={bottom} style={axisStyle} />
            <circle cx={dotX} cy={dotY} r={4} style={{ fill: series.color }} />
          </g>
        )}
      </svg>
      <span id={`${id}-keys`} className="visually-hidden">
        Arrow keys move along the points; Shift with arrows selects a range, Enter zooms to it, Escape shows all of it.
      </span>
      <div className="chart-foot">
        <p id={`${id}-readout`} className="chart-readout small" role="status" data-testid={`${props.testId}-readout`}>
          {readout.length > 0 ? readout.join(' · ') : '\u00a0'}
        </p>
        {zoom.zoom ? (
          <button type="button" className="button small ghost" onClick={zoom.reset} data-testid={`${props.testId}-reset`} title="Show all of it again (or double-click the chart)">
            Reset zoom
          </button>
        ) : null}
      </div>
    </div>
  );
}
