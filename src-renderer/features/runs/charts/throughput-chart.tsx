/**
 * A run's samples/s over time: the run's total and a line per member in its colour, against the time since the
 * run started, with the generations marked where they began. The figures are the coordinator's series of the
 * run (thinned to 600 points) and the updates this page received since (run-throughput.ts).
 */
import type { RunSnapshot } from '../../../../src-shared/training';
import { formatRate } from '../../../ui/format';
import { workerColor } from '../../../store/derive';
import { XyChart } from '../../../charts/xy-chart';
import type { XySeries } from '../../../charts/xy-chart-model';
import { useThroughput } from './run-throughput';
import { runTimeRange, useRunNow } from './run-time-axis';

/** "1:05" for 65 s, "1:02:05" past an hour. */
export function clockLabel(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

export function ThroughputChart({ run }: { run: RunSnapshot }) {
  const series = useThroughput(run.id);
  const now = useRunNow(run);
  const points = series?.total.filter((v) => v !== null).length ?? 0;
  if (!series || points < 2) {
    return (
      <p className="muted small" data-testid="throughput-empty">
        Samples/s over time draws from the run's second progress update.
      </p>
    );
  }
  const xs = series.at.map((t) => (t - series.startedAt) / 1000);
  const nan = (v: number | null) => (v === null ? NaN : v);
  const total: XySeries = { key: 'total', label: 'run', color: 'var(--accent)', xs, ys: series.total.map(nan) };
  const workerIds = Object.keys(series.workers).map(Number);
  const perWorker: XySeries[] =
    workerIds.length > 1
      ? workerIds.map((id) => ({ key: `w${id}`, label: series.workers[id]!.node, color: workerColor(id), xs, ys: series.workers[id]!.values.map(nan), faint: true }))
      : [];
  const marks = run.generationMarks
    .filter((m) => m.generation > 1)
    .map((m) => ({ x: (m.at - series.startedAt) / 1000, label: `gen ${m.generation}`, title: `generation ${m.generation}: ${m.cause}` }));
  const known = series.total.filter((v): v is number => v !== null);
  const label = `Samples per second over time: now ${formatRate(known[known.length - 1])}, low ${formatRate(Math.min(...known))}, high ${formatRate(Math.max(...known))}`;
  const describe = (i: number) => [
    `${clockLabel(xs[i]!)} after the start`,
    `run ${formatRate(series.total[i])}`,
    ...workerIds.flatMap((id) => {
      const v = series.workers[id]!.values[i];
      return workerIds.length > 1 && v !== null && v !== undefined ? [`${series.workers[id]!.node} ${formatRate(v, false)}`] : [];
    }),
  ];
  return (
    <figure style={{ margin: 0 }} data-testid="throughput">
      <XyChart
        testId="throughput-chart"
        label={label}
        xTitle="time since start"
        yTitle="samples/s"
        series={[...perWorker, total]}
        hoverSeries={total}
        describe={describe}
        yFromZero
        xRange={runTimeRange(run, now)}
        xFormat={(v) => clockLabel(v)}
        xClock
        marks={marks}
      />
      {workerIds.length > 1 && (
        <figcaption className="small chart-legend">
          <span style={{ color: 'var(--accent)' }}>━</span> run{' '}
          {workerIds.map((id) => (
            <span key={id}>
              <span style={{ color: workerColor(id) }}>━</span> {series.workers[id]!.node}{' '}
            </span>
          ))}
        </figcaption>
      )}
    </figure>
  );
}
