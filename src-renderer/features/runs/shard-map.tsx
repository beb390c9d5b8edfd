/**
 * The dataset [0, samples) as a bar coloured by worker, and the history of maps, one row per generation with
 * the cause of the change, so a rebalance after a failure is visible at a glance.
 */
import type { ShardMap as ShardMapModel } from '../../../src-shared/training';
import { formatClock, formatRange } from '../../ui/format';
import { labelColorOn, shardSegments } from '../../store/derive';

function ShardBar({ map, compact }: { map: ShardMapModel; compact?: boolean }) {
  const segments = shardSegments(map);
  const label =
    segments.length === 0
      ? `generation ${map.generation}: no worker holds a shard`
      : `generation ${map.generation}: ${segments.map((s) => `${s.node} ${formatRange(s.start, s.end)}`).join(', ')}`;
  return (
    <div className={`shard-bar${compact ? ' compact' : ''}`} role="img" aria-label={label}>
      {segments.length === 0 && <span className="shard-empty">no active worker</span>}
      {segments.map((s) => (
        <div
          key={`${s.workerId}-${s.start}`}
          className="shard"
          data-worker-id={s.workerId}
          data-node={s.node}
          title={`${s.node} (worker ${s.workerId}): samples ${formatRange(s.start, s.end)}, ${s.end - s.start} samples`}
          style={{ left: `${s.leftPct}%`, width: `${s.widthPct}%`, background: s.color, color: labelColorOn(s.color) }}
        >
          {!compact && (
            <span className="shard-label">
              <span className="shard-node">{s.node}</span>
              <span className="shard-range">{formatRange(s.start, s.end)}</span>
            </span>
          )}
        </div>
      ))}
    </div>
  );
}

export function ShardMapView({ history }: { history: ShardMapModel[] }) {
  const current = history[history.length - 1];
  if (!current) return <p className="muted">No shard map yet: shards are assigned once workers are active.</p>;
  const past = [...history].reverse();
  return (
    <div className="shard-map" data-generation={current.generation} data-shards={current.shards.length}>
      <div className="shard-current">
        <div className="shard-axis" aria-hidden="true">
          <span>0</span>
          <span>{current.totalSamples} samples</span>
        </div>
        <ShardBar map={current} />
        <ul className="shard-legend">
          {shardSegments(current).map((s) => (
            <li key={s.workerId}>
              <span className="swatch" style={{ background: s.color }} aria-hidden="true" />
              {s.node} <span className="muted mono">{formatRange(s.start, s.end)}</span>
            </li>
          ))}
        </ul>
      </div>
      <h3 className="subhead">History</h3>
      <ol className="shard-history" aria-label="Shard maps, newest first">
        {past.map((map) => (
          <li key={`${map.generation}-${map.at}`} data-generation={map.generation}>
            <span className="gen mono">g{map.generation}</span>
            <ShardBar map={map} compact />
            <span className="cause">
              {map.cause}
              <span className="muted"> · {formatClock(map.at)}</span>
            </span>
          </li>
        ))}
      </ol>
    </div>
  );
}
