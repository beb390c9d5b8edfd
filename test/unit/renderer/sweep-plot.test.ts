// The sweep as a plot (issue 25): a point per job with both values, ordered by the hyper value, the best job the
// lowest of an error-like metric and the highest of any other.
import { describe, expect, it } from 'vitest';
import { plotAxes, sweepPlot } from '../../../src-renderer/features/jobs/sweep/sweep-plot-model';
import type { SweepColumn, SweepRow } from '../../../src-renderer/features/jobs/sweep/sweep-table';

const col = (key: string): SweepColumn => ({ key, label: key.replace(/^\w+:/, ''), kind: 'number' });
const row = (name: string, lr: number | string | null, evalLoss: number | null, accuracy: number | null): SweepRow => ({
  id: name,
  cells: { name, 'hyper:lr': lr, 'metric:eval_loss': evalLoss, 'metric:accuracy': accuracy },
});
const rows = [row('a', 0.003, 2.2, 0.45), row('b', 0.001, 1.92, 0.52), row('c', 0.01, 2.71, 0.32), row('d', null, 1.0, 0.9), row('e', 'x', 0.5, 0.95)];

describe('the sweep plot', () => {
  it('plots each job with both numbers by x and marks the lowest loss', () => {
    const plot = sweepPlot(rows, col('hyper:lr'), col('metric:eval_loss'));
    expect(plot.points.map((p) => p.name)).toEqual(['b', 'a', 'c']);
    expect(plot.best).toEqual({ x: 0.001, y: 1.92, name: 'b' });
    expect(plot.lowerIsBetter).toBe(true);
  });

  it('marks the highest of a metric that is not an error', () => {
    const plot = sweepPlot(rows, col('hyper:lr'), col('metric:accuracy'));
    expect(plot.lowerIsBetter).toBe(false);
    expect(plot.best?.name).toBe('b');
    expect(sweepPlot([], col('hyper:lr'), col('metric:accuracy')).best).toBeNull();
  });

  it('offers hyper values on x and metrics and the last loss on y', () => {
    const axes = plotAxes([col('name'), col('hyper:lr'), col('metric:eval_loss'), col('loss'), col('started')]);
    expect(axes.xs.map((c) => c.key)).toEqual(['hyper:lr']);
    expect(axes.ys.map((c) => c.key)).toEqual(['metric:eval_loss', 'loss']);
  });
});
