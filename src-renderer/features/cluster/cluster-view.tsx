/**
 * Cluster over time (issue 25): every machine's CPU, RAM and GPU use over the last hours, one chart per resource with a
 * line per machine, from the coordinator's per-minute history (GET /v1/cluster/history, cluster-history-book.ts).
 * Refreshed every minute while shown. The coordinator keeps it in state.db: a restart keeps it, and the view says so.
 */
import { useEffect, useMemo, useState } from 'react';
import { emptyClusterHistory, type ClusterHistory } from '../../../src-shared/cluster/cluster-history';
import { useServices } from '../../app-context';
import { agoLabel, CLUSTER_METRICS, machineColor, metricSeries, type ClusterMetric } from './cluster-history-model';
import { XyChart } from '../../charts/xy-chart';

const REFRESH_MS = 60_000;
const RANGES = [
  { hours: 1, label: '1 h' },
  { hours: 6, label: '6 h' },
  { hours: 24, label: '24 h' },
] as const;

const pct = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '—' : `${Math.round(v)} %`);

/** The coordinator's history, fetched now and every minute; null until the first answer, an error's words if it failed. */
function useClusterHistory(): { history: ClusterHistory | null; now: number; error: string | null } {
  const { api } = useServices();
  const [state, setState] = useState<{ history: ClusterHistory | null; now: number; error: string | null }>({ history: null, now: Date.now(), error: null });
  useEffect(() => {
    let live = true;
    const load = () =>
      api.getClusterHistory().then(
        (history) => live && setState({ history, now: Date.now(), error: null }),
        (error: unknown) => live && setState((s) => ({ history: s.history ?? emptyClusterHistory(), now: Date.now(), error: error instanceof Error ? error.message : String(error) })),
      );
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [api]);
  return state;
}

function MetricChart({ history, metric, title, now, hours }: { history: ClusterHistory; metric: ClusterMetric; title: string; now: number; hours: number }) {
  const from = -hours * 3600;
  const series = metricSeries(history, metric, now)
    .map((s) => {
      const start = s.xs.findIndex((x) => x >= from);
      return start === -1 ? null : { ...s, xs: s.xs.slice(start), ys: s.ys.slice(start) };
    })
    .filter((s) => s !== null);
  return (
    <section className="card cluster-chart" aria-label={title} data-metric={metric} data-lines={series.length}>
      <h3 className="card-title">{title}</h3>
      {series.length === 0 ? (
        <p className="muted small">{metric.startsWith('gpu') ? 'No machine reported a GPU in this time.' : 'No machine reported this in this time.'}</p>
      ) : (
        <>
          <XyChart
            testId={`cluster-${metric}`}
            label={`${title} per machine over the last ${hours} h, latest: ${series.map((s) => `${s.label} ${pct(s.ys.at(-1))}`).join(', ')}`}
            xTitle="time before now"
            yTitle="%"
            series={series}
            hoverSeries={series[0]!}
            describe={(i) => {
              const x = series[0]!.xs[i]!;
              return [agoLabel(x), ...series.map((s) => `${s.label} ${pct(s.ys[s.xs.indexOf(x)])}`)];
            }}
            yRange={[0, 100]}
            xRange={[from, 0]}
            xFormat={(v) => agoLabel(v)}
            xClock
          />
          <p className="small chart-legend">
            {series.map((s) => (
              <span key={s.key}>
                <span style={{ color: s.color }}>━</span> {s.label} {pct(s.ys.at(-1))}{' '}
              </span>
            ))}
          </p>
        </>
      )}
    </section>
  );
}

export function ClusterView() {
  const { history, now, error } = useClusterHistory();
  const [hours, setHours] = useState<number>(6);
  const machines = useMemo(() => history?.nodes.map((n, i) => ({ node: n.node, color: machineColor(i) })) ?? [], [history]);
  return (
    <section className="view" aria-labelledby="view-title" data-testid="cluster-view">
      <div className="view-head">
        <div>
          <h1 id="view-title" className="view-title" tabIndex={-1}>
            Cluster over time
          </h1>
          <p className="view-sub muted">
            Every machine&apos;s CPU, RAM and GPU use, one point a minute (the minute&apos;s heartbeats averaged), for up to 24 hours. Kept by the coordinator across restarts (a crash loses at most the minute under way).
          </p>
        </div>
        <div className="segmented" role="group" aria-label="Time shown">
          {RANGES.map((r) => (
            <button key={r.hours} type="button" className="seg-button" aria-pressed={hours === r.hours} onClick={() => setHours(r.hours)}>
              {r.label}
            </button>
          ))}
        </div>
      </div>
      {error && <p className="card small" role="alert">Could not load the cluster&apos;s history: {error}</p>}
      {history === null ? (
        <p className="muted card">Loading…</p>
      ) : machines.length === 0 ? (
        <p className="muted card" data-testid="cluster-empty">No machine has reported its use yet: each worker&apos;s heartbeats add a point a minute once it has joined and been approved.</p>
      ) : (
        <div className="cluster-charts" data-testid="cluster-charts" data-machines={machines.length}>
          {CLUSTER_METRICS.map((m) => (
            <MetricChart key={m.key} history={history} metric={m.key} title={m.title} now={now} hours={hours} />
          ))}
        </div>
      )}
    </section>
  );
}
