/**
 * A run's loss against its step: axes with tick labels, the raw loss faint under an exponentially smoothed line
 * (the slider; 0 shows the raw loss alone), a log scale for a loss that falls over decades, a dashed line where
 * each generation after the first began ("gen 2", its cause on hover), and a readout of the point under the
 * pointer: step, loss, smoothed loss, generation and the workers that trained it.
 */
import { useId, useState } from 'react';
import type { GenerationMark, LossPoint, ShardMap } from '../../src-shared/training';
import { formatLoss } from '../ui/format';
import { ema } from './chart-math';
import { XyChart } from './xy-chart';
import type { XySeries } from './xy-chart-model';

/** TensorBoard's default: enough to read a noisy curve, little enough to keep its shape. */
export const DEFAULT_SMOOTHING = 0.6;

/** The workers of each generation, from the shard maps: the loss is rank 0's, trained on all of them. */
function membersByGeneration(history: readonly ShardMap[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const map of history) out.set(map.generation, [...new Set(map.shards.map((s) => s.node))].join(', '));
  return out;
}

export function LossChart({ points, marks = [], shardHistory = [] }: { points: LossPoint[]; marks?: GenerationMark[]; shardHistory?: ShardMap[] }) {
  const id = useId();
  const [smoothing, setSmoothing] = useState(DEFAULT_SMOOTHING);
  const [log, setLog] = useState(false);
  const finite = points.filter((p) => Number.isFinite(p.loss));
  if (finite.length === 0) return <p className="muted">The loss curve starts with the trainer's first progress line.</p>;
  const xs = finite.map((p) => p.step);
  const raw = finite.map((p) => p.loss);
  // A new generation starts a fresh average: a relaunch's jump is not smeared back over the old curve.
  const breaks = new Set(finite.flatMap((p, i) => (i > 0 && p.generation !== finite[i - 1]!.generation ? [i] : [])));
  const smooth = ema(raw, smoothing, breaks);
  const members = membersByGeneration(shardHistory);
  const rawSeries: XySeries = { key: 'raw', label: 'loss', color: 'var(--accent)', xs, ys: raw, faint: smoothing > 0 };
  const smoothSeries: XySeries = { key: 'smoothed', label: 'smoothed loss', color: 'var(--accent)', xs, ys: smooth };
  const series = smoothing > 0 ? [rawSeries, smoothSeries] : [rawSeries];
  const shown = marks.filter((m) => m.generation > 1);
  const first = finite[0]!;
  const last = finite[finite.length - 1]!;
  const label = `Loss from ${formatLoss(first.loss)} at step ${first.step} to ${formatLoss(last.loss)} at step ${last.step}${
    shown.length ? `; ${shown.map((m) => `generation ${m.generation} from step ${m.step}`).join(', ')}` : ''
  }${log ? ', log scale' : ''}`;
  const describe = (i: number) => {
    const p = finite[i]!;
    const who = members.get(p.generation);
    return [
      `step ${p.step}`,
      `loss ${formatLoss(p.loss)}`,
      ...(smoothing > 0 ? [`smoothed ${formatLoss(smooth[i])}`] : []),
      `gen ${p.generation}${who ? ` on ${who}` : ''}`,
    ];
  };
  return (
    <figure className="loss-curve" data-points={points.length} data-marks={shown.length} style={{ margin: 0 }}>
      <div className="chart-controls small">
        <label htmlFor={`${id}-smooth`}>
          Smoothing
          <input
            id={`${id}-smooth`}
            type="range"
            min={0}
            max={0.99}
            step={0.01}
            value={smoothing}
            onChange={(e) => setSmoothing(Number(e.target.value))}
            data-testid="loss-smoothing"
          />
          <span className="muted" style={{ minWidth: '2.5em' }}>
            {smoothing.toFixed(2)}
          </span>
        </label>
        <label>
          <input type="checkbox" checked={log} onChange={(e) => setLog(e.target.checked)} data-testid="loss-log" /> Log scale
        </label>
      </div>
      <XyChart
        testId="loss-chart"
        label={label}
        xTitle="step"
        yTitle={log ? 'loss (log)' : 'loss'}
        series={series}
        hoverSeries={smoothing > 0 ? smoothSeries : rawSeries}
        describe={describe}
        yKind={log ? 'log' : 'linear'}
        marks={shown.map((m) => ({ x: m.step, label: `gen ${m.generation}`, title: `generation ${m.generation} from step ${m.step}: ${m.cause}` }))}
      />
    </figure>
  );
}
