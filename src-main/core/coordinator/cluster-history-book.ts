/**
 * The coordinator's memory of every machine's CPU, RAM and GPU use over the last 24 hours (the Cluster over time view,
 * GET /v1/cluster/history). Subscribed to the change feed like RunSeriesBook: worker snapshots carry each worker's
 * latest resources sample, already bounded by the heartbeat schema. Only workers of the pool count (a machine awaiting
 * approval, or one whose new key is held back, adds nothing); one point a minute a machine, the minute's samples
 * averaged, points older than 24 h dropped, at most CLUSTER_HISTORY_NODES machines (the one heard from longest ago goes).
 * Kept in memory only: a serve restart starts it empty (the view says so).
 */
import {
  CLUSTER_HISTORY_KEPT_MS,
  CLUSTER_HISTORY_NODES,
  CLUSTER_HISTORY_STEP_MS,
  emptyClusterHistory,
  type ClusterHistory,
  type ClusterHistoryPoint,
} from '../../../src-shared/cluster/cluster-history';
import type { WorkerResourcesSample } from '../../../src-shared/resources/worker-resources';
import type { WorkerSnapshot } from '../../../src-shared/training';
import type { CoordinatorChange } from './change-feed';

type Field = Exclude<keyof ClusterHistoryPoint, 'at'>;
const FIELDS: readonly Field[] = ['cpuPct', 'ramUsedMb', 'ramTotalMb', 'gpuUtilPct', 'gpuMemUsedMb', 'gpuMemTotalMb'];
const COUNTED = new Set<WorkerSnapshot['state']>(['syncing', 'active', 'draining']);

/** The minute being filled: sums and counts per field, to average. */
interface OpenMinute {
  at: number;
  sums: Record<Field, number>;
  counts: Record<Field, number>;
}

interface NodeEntry {
  points: ClusterHistoryPoint[];
  open: OpenMinute | null;
  /** The last sample taken (a worker snapshot repeats it until the next heartbeat). */
  lastAt: number;
}

/** A sample's values as one point's fields (GPUs: mean utilisation, summed memory). */
export function pointValues(s: WorkerResourcesSample): Record<Field, number | null> {
  const util = s.gpus.map((g) => g.utilPct).filter((v): v is number => v !== null);
  const sum = (values: (number | null)[]) => (values.some((v) => v !== null) ? values.reduce<number>((a, v) => a + (v ?? 0), 0) : null);
  return {
    cpuPct: s.cpuPct,
    ramUsedMb: s.ramUsedMb,
    ramTotalMb: s.ramTotalMb,
    gpuUtilPct: util.length > 0 ? util.reduce((a, v) => a + v, 0) / util.length : null,
    gpuMemUsedMb: sum(s.gpus.map((g) => g.memUsedMb)),
    gpuMemTotalMb: sum(s.gpus.map((g) => g.memTotalMb)),
  };
}

function closed(m: OpenMinute): ClusterHistoryPoint {
  const point = { at: m.at } as ClusterHistoryPoint;
  for (const f of FIELDS) point[f] = m.counts[f] > 0 ? m.sums[f] / m.counts[f] : null;
  return point;
}

export class ClusterHistoryBook {
  /** Insertion order is the order the machines were last heard from. */
  private readonly nodes = new Map<string, NodeEntry>();

  constructor(private readonly maxNodes = CLUSTER_HISTORY_NODES) {}

  take(change: CoordinatorChange): void {
    if (change.type !== 'workers') return;
    for (const w of change.workers) {
      if (w.resources && COUNTED.has(w.state) && !w.keyHeldBack) this.add(w.node, w.resources);
    }
  }

  /** One sample of machine `node` (its heartbeat's time `at`); an older or repeated one is ignored. */
  add(node: string, sample: WorkerResourcesSample): void {
    let entry = this.nodes.get(node);
    if (entry && sample.at <= entry.lastAt) return;
    if (!entry) entry = { points: [], open: null, lastAt: -Infinity };
    this.nodes.delete(node);
    this.nodes.set(node, entry);
    while (this.nodes.size > this.maxNodes) this.nodes.delete(this.nodes.keys().next().value!);
    entry.lastAt = sample.at;
    const minute = Math.floor(sample.at / CLUSTER_HISTORY_STEP_MS) * CLUSTER_HISTORY_STEP_MS;
    if (entry.open && entry.open.at !== minute) {
      entry.points.push(closed(entry.open));
      entry.open = null;
    }
    entry.open ??= { at: minute, sums: zeroes(), counts: zeroes() };
    const values = pointValues(sample);
    for (const f of FIELDS) {
      const v = values[f];
      if (v === null || !Number.isFinite(v)) continue;
      entry.open.sums[f] += v;
      entry.open.counts[f]++;
    }
    const oldest = minute - CLUSTER_HISTORY_KEPT_MS;
    const drop = entry.points.findIndex((p) => p.at > oldest);
    entry.points.splice(0, drop === -1 ? entry.points.length : drop);
  }

  /** Every kept machine's points (the minute being filled included) by name; `now` drops what is older than 24 h. */
  history(now: number): ClusterHistory {
    const oldest = now - CLUSTER_HISTORY_KEPT_MS;
    const nodes = [...this.nodes].map(([node, e]) => ({ node, points: [...e.points, ...(e.open ? [closed(e.open)] : [])].filter((p) => p.at > oldest) }));
    return { ...emptyClusterHistory(), nodes: nodes.filter((n) => n.points.length > 0).sort((a, b) => a.node.localeCompare(b.node)) };
  }
}

function zeroes(): Record<Field, number> {
  return { cpuPct: 0, ramUsedMb: 0, ramTotalMb: 0, gpuUtilPct: 0, gpuMemUsedMb: 0, gpuMemTotalMb: 0 };
}
