/**
 * The sweep compared side by side (Jobs view): each job's hyper values, final metrics (from the metrics.json its
 * trainer wrote, when it did), last loss, start, end and duration, sortable by any column (click a header:
 * ascending, descending, the queue's order), and plotted (sweep-plot.tsx). The model is store/sweep-table.ts.
 */
import { useMemo, useState } from 'react';
import type { JobSnapshot } from '../../../../src-shared/jobs/types';
import { formatClock, formatDuration, formatLoss } from '../../../ui/format';
import { SweepPlot } from './sweep-plot';
import { nextSort, sortSweepRows, sweepColumns, sweepRows, type SweepCell, type SweepColumn, type SweepSort } from './sweep-table';
import { useNow } from '../../../ui/use-now';

function cellText(column: SweepColumn, value: SweepCell): string {
  if (value === null) return '—';
  if (typeof value === 'string') return value;
  if (column.kind === 'time') return formatClock(value);
  if (column.kind === 'duration') return formatDuration(value);
  return column.key === 'loss' || column.key.startsWith('metric:') ? formatLoss(value) : String(value);
}

export function SweepComparison({ jobs }: { jobs: JobSnapshot[] }) {
  const [sort, setSort] = useState<SweepSort | null>(null);
  const now = useNow();
  const columns = useMemo(() => sweepColumns(jobs), [jobs]);
  const unsorted = sweepRows(jobs, columns, now);
  const rows = sortSweepRows(unsorted, sort);
  const hasMetrics = columns.some((c) => c.key.startsWith('metric:'));
  return (
    <section className="card table-card" aria-labelledby="sweep-title" data-testid="sweep-comparison">
      <h2 id="sweep-title" className="card-title">
        Compare the sweep{' '}
        <span className="muted small">
          · {hasMetrics ? 'final metrics from each job’s metrics.json' : 'no job has written a metrics.json yet'} · click a column to sort
        </span>
      </h2>
      <div className="table-scroll">
        <table className="table sweep-table">
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c.key} scope="col" aria-sort={sort?.key === c.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'} className={c.kind === 'text' ? undefined : 'num'}>
                  <button type="button" className="sort-button" data-sort-key={c.key} onClick={() => setSort((s) => nextSort(s, c.key))}>
                    {c.label}
                    <span aria-hidden="true">{sort?.key === c.key ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}</span>
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} data-sweep-job={r.cells.name}>
                {columns.map((c) =>
                  c.key === 'name' ? (
                    <th key={c.key} scope="row" className="mono small">
                      {r.cells.name}
                    </th>
                  ) : (
                    <td key={c.key} className={c.kind === 'text' ? 'small' : 'num small'} data-col={c.key}>
                      {cellText(c, r.cells[c.key] ?? null)}
                    </td>
                  ),
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <SweepPlot rows={unsorted} columns={columns} />
    </section>
  );
}
