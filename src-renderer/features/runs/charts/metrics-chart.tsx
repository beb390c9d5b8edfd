/**
 * The trainer's other numbers (`lr`, `eval_loss`, `grad_norm`…: any finite field of its progress lines the
 * coordinator does not read itself) against the step, one at a time with a picker of their names, the
 * generation marks as on the loss chart. Nothing to configure: a trainer that prints a field has its chart.
 */
import { useId, useState } from 'react';
import type { GenerationMark, MetricSeries } from '../../../../src-shared/training';
import { formatLoss } from '../../../ui/format';
import { XyChart } from '../../../charts/xy-chart';
import type { XySeries } from '../../../charts/xy-chart-model';

export function MetricsChart({ metrics = [], marks = [] }: { metrics?: MetricSeries[]; marks?: GenerationMark[] }) {
  const id = useId();
  const [picked, setPicked] = useState<string | null>(null);
  if (metrics.length === 0) {
    return (
      <p className="muted small" data-testid="metrics-empty">
        Any other number on the trainer's progress lines (<code>lr</code>, <code>eval_loss</code>, <code>grad_norm</code>…) is charted here.
      </p>
    );
  }
  const shown = metrics.find((m) => m.name === picked) ?? metrics[0]!;
  const points = shown.points;
  const xs = points.map((p) => p.step);
  const series: XySeries = { key: shown.name, label: shown.name, color: 'var(--accent)', xs, ys: points.map((p) => p.value) };
  const genMarks = marks.filter((m) => m.generation > 1);
  const first = points[0];
  const last = points.at(-1);
  const label = first && last ? `${shown.name} from ${formatLoss(first.value)} at step ${first.step} to ${formatLoss(last.value)} at step ${last.step}` : `${shown.name}: no points`;
  return (
    <figure className="metrics-chart" data-metric={shown.name} style={{ margin: 0 }}>
      <div className="chart-controls small">
        <label htmlFor={`${id}-metric`}>
          Metric
          <select id={`${id}-metric`} value={shown.name} onChange={(e) => setPicked(e.target.value)} data-testid="metric-picker">
            {metrics.map((m) => (
              <option key={m.name} value={m.name}>
                {m.name}
              </option>
            ))}
          </select>
        </label>
        <span className="muted">{metrics.length === 1 ? '1 metric' : `${metrics.length} metrics`} on the progress lines</span>
      </div>
      <XyChart
        testId="metric-chart"
        label={label}
        xTitle="step"
        yTitle={shown.name}
        series={[series]}
        hoverSeries={series}
        describe={(i) => [`step ${points[i]!.step}`, `${shown.name} ${formatLoss(points[i]!.value)}`, `gen ${points[i]!.generation}`]}
        marks={genMarks.map((m) => ({ x: m.step, label: `gen ${m.generation}`, title: `generation ${m.generation} from step ${m.step}: ${m.cause}` }))}
      />
    </figure>
  );
}
