/**
 * Per-worker resources in the run view: for each member of the run, its CPU busy, RAM in use, and the mean
 * utilisation and memory share of the GPUs it holds, in percent over the run's time, from the figures each
 * worker's heartbeat carries (kept by the coordinator and recorded in the page, resource-history.ts). A member
 * whose agent sends none says so.
 */
import type { RunSnapshot, WorkerSnapshot } from '../../../../src-shared/training';
import { memberLabel, runMembers, type RunMember } from '../runs-slice';
import { workerColor } from '../../../store/derive';
import { memberSeries, useResourceHistory } from './resource-history';
import { useRunSeriesSeed } from './run-series-seed';
import { runTimeRange, useRunNow, workerEndMark } from './run-time-axis';
import { clockLabel } from './throughput-chart';
import { XyChart } from '../../../charts/xy-chart';
import type { XySeries } from '../../../charts/xy-chart-model';

const COLORS = { gpuUtil: 'var(--accent)', gpuMem: '#a855f7', cpu: '#16a34a', ram: '#d97706' } as const;
const NAMES = { gpuUtil: 'GPU busy', gpuMem: 'GPU memory', cpu: 'CPU', ram: 'RAM' } as const;
type Metric = keyof typeof NAMES;

const pct = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '—' : `${Math.round(v)} %`);

function MemberResources({ run, member, now }: { run: RunSnapshot; member: RunMember; now: number }) {
  const history = useResourceHistory(member.workerId);
  const row = run.workerRows.find((r) => r.workerId === member.workerId);
  // A part that ended early ends its chart's line there: what the worker did after is another story.
  const early = (row?.end === 'failed' || row?.end === 'left') && row.endedAt ? row.endedAt : Infinity;
  const end = Math.min(run.endedAt ?? Infinity, early);
  const samples = (history?.samples ?? []).filter((s) => s.at >= run.startedAt && s.at <= end);
  const title = (
    <h4 className="small strong resource-title">
      <span className="swatch" style={{ background: workerColor(member.workerId) }} aria-hidden="true" /> {memberLabel(member)}
    </h4>
  );
  if (samples.length < 2) {
    return (
      <div className="member-resources" data-worker-id={member.workerId} data-samples={samples.length}>
        {title}
        <p className="muted small">{history ? 'Waiting for its next heartbeats…' : 'Its heartbeats carry no resource figures (an older agent, or none received since the coordinator started).'}</p>
      </div>
    );
  }
  const m = memberSeries(samples, member.gpuIndices);
  const xs = m.at.map((t) => (t - run.startedAt) / 1000);
  const metrics: Metric[] = m.hasGpu ? ['gpuUtil', 'gpuMem', 'cpu', 'ram'] : ['cpu', 'ram'];
  const series: XySeries[] = metrics.map((k) => ({ key: k, label: NAMES[k], color: COLORS[k], xs, ys: m[k] }));
  const last = m.at.length - 1;
  // The run's axis (as samples/s has it), with a mark where this worker's part ended before the run did.
  const mark = workerEndMark(run, row, m.at[last] ?? null);
  const latest = metrics.map((k) => `${NAMES[k]} ${pct(m[k][last])}`).join(', ');
  return (
    <div className="member-resources" data-worker-id={member.workerId} data-samples={samples.length}>
      {title}
      <XyChart
        testId={`resources-${member.workerId}`}
        label={`${member.node} resources over the run, now: ${latest}${mark ? `; ${mark.title}` : ''}`}
        xTitle="time since start"
        yTitle="%"
        series={series}
        hoverSeries={series[series.length - 1]!}
        describe={(i) => [`${clockLabel(xs[i]!)}`, ...metrics.map((k) => `${NAMES[k]} ${pct(m[k][i])}`)]}
        yRange={[0, 100]}
        xRange={runTimeRange(run, now)}
        marks={mark ? [mark] : []}
        xFormat={(v) => clockLabel(v)}
        xClock
      />
      <p className="small chart-legend">
        {metrics.map((k) => (
          <span key={k}>
            <span style={{ color: COLORS[k] }}>━</span> {NAMES[k]} {pct(m[k][last])}{' '}
          </span>
        ))}
        {mark && (
          <span className={`chart-legend-end chart-legend-${mark.kind}`} data-testid="worker-end-note">
            ┃ {mark.title} ({clockLabel(mark.x)} after the start)
          </span>
        )}
      </p>
    </div>
  );
}

export function RunResources({ run, workers }: { run: RunSnapshot; workers: WorkerSnapshot[] }) {
  useRunSeriesSeed(run.id); // both charts of the run page (this one and samples/s) start from what the coordinator kept
  const now = useRunNow(run);
  const current = runMembers(run, workers);
  // After the run (or between generations) its members are gone: show the workers that took part.
  const members: RunMember[] =
    current.length > 0 ? current : run.workerRows.map((r) => ({ workerId: r.workerId, node: r.node, gpuIndices: null }));
  if (members.length === 0) return <p className="muted small">No worker in this run yet.</p>;
  return (
    <div className="run-resources" data-testid="run-resources">
      {members.map((member) => (
        <MemberResources key={member.workerId} run={run} member={member} now={now} />
      ))}
    </div>
  );
}
