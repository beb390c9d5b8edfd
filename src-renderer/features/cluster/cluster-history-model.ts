/**
 * The Cluster over time view's charts from GET /v1/cluster/history: one chart per resource (CPU, RAM, GPU busy,
 * GPU memory, in percent), a line per machine, x in seconds before now. Pure.
 */
import type { ClusterHistory, ClusterHistoryPoint } from '../../../src-shared/cluster/cluster-history';
import { WORKER_PALETTE } from '../../store/derive';
import type { XySeries } from '../../charts/xy-chart-model';

export type ClusterMetric = 'cpu' | 'ram' | 'gpuUtil' | 'gpuMem';

export const CLUSTER_METRICS: readonly { key: ClusterMetric; title: string }[] = [
  { key: 'cpu', title: 'CPU busy' },
  { key: 'ram', title: 'RAM in use' },
  { key: 'gpuUtil', title: 'GPU busy' },
  { key: 'gpuMem', title: 'GPU memory in use' },
];

function share(used: number | null, total: number | null): number | null {
  return used === null || total === null || total <= 0 ? null : Math.min(100, (used / total) * 100);
}

/** A point's value of `metric`, in percent (null where the machine did not say). */
export function metricValue(p: ClusterHistoryPoint, metric: ClusterMetric): number | null {
  if (metric === 'cpu') return p.cpuPct;
  if (metric === 'gpuUtil') return p.gpuUtilPct;
  if (metric === 'ram') return share(p.ramUsedMb, p.ramTotalMb);
  return share(p.gpuMemUsedMb, p.gpuMemTotalMb);
}

/** A machine's colour: by its place in the (name-sorted) list, so each keeps its colour on every chart. */
export function machineColor(index: number): string {
  return WORKER_PALETTE[index % WORKER_PALETTE.length]!;
}

/**
 * One line per machine that said `metric` at least once; x is seconds before `now` (negative). A point stands for its
 * whole minute: the last one is drawn on to its minute's end (or now), so a machine heard for one minute shows a dash.
 */
export function metricSeries(history: ClusterHistory, metric: ClusterMetric, now: number): XySeries[] {
  const out: XySeries[] = [];
  history.nodes.forEach((n, i) => {
    const kept = n.points.map((p) => [(p.at - now) / 1000, metricValue(p, metric)] as const).filter((xy): xy is readonly [number, number] => xy[1] !== null);
    const last = kept.at(-1);
    if (!last) return;
    const end = Math.min(0, last[0] + history.stepMs / 1000);
    if (end > last[0]) kept.push([end, last[1]]);
    out.push({ key: n.node, label: n.node, color: machineColor(i), xs: kept.map((xy) => xy[0]), ys: kept.map((xy) => xy[1]) });
  });
  return out;
}

/** "now", "−5 min", "−2 h 10 min" for x seconds before now. */
export function agoLabel(x: number): string {
  const minutes = Math.round(-x / 60);
  if (minutes <= 0) return 'now';
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return `−${h > 0 ? `${h} h${m > 0 ? ` ${m} min` : ''}` : `${m} min`}`;
}
