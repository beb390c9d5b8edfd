/**
 * The sweep as a plot (Jobs view, issue 25): a metric (or the last loss) against a hyper value, a dot per job, the
 * best job marked and named; pickers for both axes. Drawn by the shared xy-chart (zoom included). The model is
 * store/sweep-plot.ts.
 */
import { useId, useState } from 'react';
import { XyChart } from '../../../charts/xy-chart';
import type { XySeries } from '../../../charts/xy-chart-model';
import { formatLoss } from '../../../ui/format';
import { plotAxes, sweepPlot } from './sweep-plot-model';
import type { SweepColumn, SweepRow } from './sweep-table';

function AxisPicker({ label, columns, value, onChange, testId }: { label: string; columns: SweepColumn[]; value: string; onChange: (key: string) => void; testId: string }) {
  const id = useId();
  return (
    <label htmlFor={id}>
      {label}
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)} data-testid={testId}>
        {columns.map((c) => (
          <option key={c.key} value={c.key}>
            {c.label}
          </option>
        ))}
      </select>
    </label>
  );
}

export function SweepPlot({ rows, columns }: { rows: SweepRow[]; columns: SweepColumn[] }) {
  const { xs, ys } = plotAxes(columns);
  const [xKey, setX] = useState<string | null>(null);
  const [yKey, setY] = useState<string | null>(null);
  if (xs.length === 0 || ys.length === 0) return null;
  const x = xs.find((c) => c.key === xKey) ?? xs[0]!;
  const y = ys.find((c) => c.key === yKey) ?? ys.find((c) => c.key.startsWith('metric:')) ?? ys[0]!;
  const plot = sweepPlot(rows, x, y);
  const series: XySeries = { key: 'sweep', label: y.label, color: 'var(--accent)', xs: plot.points.map((p) => p.x), ys: plot.points.map((p) => p.y), dots: true, faint: true };
  const best = plot.best;
  return (
    <figure className="sweep-plot" data-testid="sweep-plot" data-best={best?.name ?? ''} style={{ margin: 0, padding: '12px 18px 4px' }}>
      <div className="chart-controls small">
        <AxisPicker label="Plot" columns={ys} value={y.key} onChange={setY} testId="sweep-plot-y" />
        <AxisPicker label="against" columns={xs} value={x.key} onChange={setX} testId="sweep-plot-x" />
        <span className="muted">
          {best ? `best: ${best.name} (${y.label} ${formatLoss(best.y)}, ${plot.lowerIsBetter ? 'lowest' : 'highest'})` : 'no job has both values yet'}
        </span>
      </div>
      {plot.points.length > 0 && (
        <XyChart
          testId="sweep-chart"
          label={`${y.label} against ${x.label} for ${plot.points.length} jobs${best ? `; best ${best.name}` : ''}`}
          xTitle={x.label}
          yTitle={y.label}
          series={[series]}
          hoverSeries={series}
          describe={(i) => [plot.points[i]!.name, `${x.label} ${plot.points[i]!.x}`, `${y.label} ${formatLoss(plot.points[i]!.y)}`]}
          marks={best ? [{ x: best.x, label: `best: ${best.name}`, title: `${best.name}: the ${plot.lowerIsBetter ? 'lowest' : 'highest'} ${y.label}` }] : []}
        />
      )}
    </figure>
  );
}
