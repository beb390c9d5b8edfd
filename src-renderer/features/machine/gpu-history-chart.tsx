/**
 * One GPU metric (utilisation or memory used) over the last minutes as a small inline SVG, a line per GPU: no
 * chart library, no canvas, nothing fetched. The legend under it is also the text summary a screen reader gets.
 */
import { useId } from 'react';
import type { GpuHistory } from '../../../src-shared/hardware';
import { formatDuration } from '../../ui/format';
import { CHART_H, CHART_W, gpuChart, gpuLabel, gpuSummary, PLOT, seriesColor, type GpuMetric } from './gpu-history-model';

const TITLES: Record<GpuMetric, string> = { utilization: 'Utilisation', memory: 'Memory used' };
const Y_AXIS: Record<GpuMetric, string> = { utilization: 'busy, %', memory: '% of each GPU' };

const axisStyle = { stroke: 'var(--border-strong)', strokeWidth: 1 };
const gridStyle = { stroke: 'var(--border)', strokeWidth: 1, strokeDasharray: '3 3' };
const labelStyle = { fill: 'var(--muted)', fontSize: 11, fontVariantNumeric: 'tabular-nums' } as const;

export function GpuHistoryChart({ history, metric, end }: { history: GpuHistory; metric: GpuMetric; end: number }) {
  const id = useId();
  const model = gpuChart(history, metric, end);
  const bottom = CHART_H - PLOT.bottom;
  const title = `${TITLES[metric]}, last ${formatDuration(history.windowMs)}`;
  return (
    <figure className="gpu-history-chart" data-testid={`gpu-history-${metric}`} style={{ margin: 0, minWidth: 0 }}>
      <h3 id={`${id}-title`} className="small strong" style={{ margin: '0 0 4px' }}>
        {title}
      </h3>
      <svg
        viewBox={`0 0 ${CHART_W} ${CHART_H}`}
        role="img"
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-summary`}
        style={{ display: 'block', width: '100%', height: 'auto' }}
      >
        {model.yTicks.map((t) => (
          <g key={t.label}>
            <line x1={PLOT.left} x2={CHART_W - PLOT.right} y1={t.y} y2={t.y} style={t.label === '0 %' ? axisStyle : gridStyle} />
            <text x={PLOT.left - 6} y={t.y + 4} textAnchor="end" style={labelStyle}>
              {t.label}
            </text>
          </g>
        ))}
        <line x1={PLOT.left} x2={PLOT.left} y1={PLOT.top} y2={bottom} style={axisStyle} />
        {model.xTicks.map((t) => (
          <text key={t.label} x={t.x} y={bottom + 16} textAnchor={t.label === 'now' ? 'end' : 'middle'} style={labelStyle}>
            {t.label}
          </text>
        ))}
        <text x={4} y={PLOT.top + 2} transform={`rotate(-90 4 ${PLOT.top + 2})`} textAnchor="end" dominantBaseline="hanging" style={labelStyle}>
          {Y_AXIS[metric]}
        </text>
        {model.lines.map((line) => (
          <path
            key={line.key}
            d={line.path}
            data-gpu-key={line.key}
            style={{ fill: 'none', stroke: line.color, strokeWidth: 2, strokeLinejoin: 'round' }}
            vectorEffect="non-scaling-stroke"
          />
        ))}
      </svg>
      <figcaption id={`${id}-summary`} style={{ marginTop: 4 }}>
        <ul style={{ listStyle: 'none', margin: 0, padding: 0, display: 'grid', gap: 2 }}>
          {history.gpus.map((series, position) => (
            <li key={series.key} className="small" data-gpu-key={series.key}>
              <span aria-hidden="true" style={{ display: 'inline-block', width: 10, height: 10, borderRadius: 2, marginRight: 6, background: seriesColor(position) }} />
              <span className="strong">{gpuLabel(series)}</span>: <span className="muted">{gpuSummary(history, series, metric)}</span>
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
