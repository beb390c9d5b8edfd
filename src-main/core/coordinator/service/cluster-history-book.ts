/**
 * The coordinator's memory of every machine's CPU, RAM and GPU use over the last 24 hours (the Cluster over time view,
 * GET /v1/cluster/history). Subscribed to the change feed like RunSeriesBook: worker snapshots carry each worker's
 * latest resources sample, already bounded by the heartbeat schema. Only workers of the pool count (a machine awaiting
 * approval, or one whose new key is held back, adds nothing); one point a minute a machine, the minute's samples
 * averaged, points older than 24 h dropped, at most CLUSTER_HISTORY_NODES machines (the one heard from longest ago goes).
 * Kept in state.db through a ClusterHistoryStore (state/cluster-history-repo.ts): each minute is saved as it closes,
 * the minutes being filled when the app stops (flush), and a restart restores them (restore) under the same bounds.
 */
import {
  CLUSTER_HISTORY_KEPT_MS,
  CLUSTER_HISTORY_NODES,
  CLUSTER_HISTORY_STEP_MS,
  emptyClusterHistory,
  type ClusterHistory,
  type ClusterHistoryPoint,
} from '../../../../src-shared/cluster/cluster-history';
import type { WorkerResourcesSample } from '../../../../src-shared/resources/worker-resources';
import type { WorkerSnapshot } from '../../../../src-shared/training';
import type { CoordinatorChange } from '../common';

type Field = Exclude<keyof ClusterHistoryPoint, 'at'>;
const FIELDS: readonly Field[] = ['cpuPct', 'ramUsedMb', 'ramTotalMb', 'gpuUtilPct', 'gpuMemUsedMb', 'gpuMemTotalMb'];
const COUNTED = new Set<WorkerSnapshot['state']>(['syncing', 'active', 'draining']);

/** The minute being filled: sums and counts per field, to average, and how many samples it took. */
interface OpenMinute {
  at: number;
  sums: Record<Field, number>;
  counts: Record<Field, number>;
  samples: number;
}

/** A minute as kept: its point and how many samples it averaged (the weight it goes on with after a restart). */
export interface KeptClusterPoint extends ClusterHistoryPoint {
  samples: number;
}

/** Where the minutes are kept across restarts (state.db's cluster_history; writes may be batched). */
export interface ClusterHistoryStore {
  save(node: string, point: KeptClusterPoint): void;
  forget(node: string): void;
  /** Drops every minute at or before `oldest`. */
  prune(oldest: number): void;
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

/** A kept minute opened again, each value weighing as many samples as it averaged. */
function reopened(p: KeptClusterPoint): OpenMinute {
  const sums = zeroes();
  const counts = zeroes();
  const weight = Math.max(1, p.samples);
  for (const f of FIELDS) {
    const v = p[f];
    if (v === null || !Number.isFinite(v)) continue;
    sums[f] = v * weight;
    counts[f] = weight;
  }
  return { at: p.at, sums, counts, samples: weight };
}

export class ClusterHistoryBook {
  /** Insertion order is the order the machines were last heard from. */
  private readonly nodes = new Map<string, NodeEntry>();
  /** The minute up to which the store was last pruned. */
  private prunedAt = -Infinity;

  constructor(
    private readonly maxNodes = CLUSTER_HISTORY_NODES,
    private readonly store: ClusterHistoryStore | null = null,
  ) {}

  /**
   * Takes back what a store kept (before any sample): each machine's minutes, oldest first, its last one still being
   * filled, so a minute cut by a restart goes on. Machines in `nodes` order, the last one heard from last.
   */
  restore(nodes: readonly { node: string; points: readonly KeptClusterPoint[] }[]): void {
    const byLastHeard = nodes.filter((n) => n.points.length > 0).sort((a, b) => a.points.at(-1)!.at - b.points.at(-1)!.at);
    for (const { node, points } of byLastHeard.slice(-this.maxNodes)) {
      const last = points.at(-1)!;
      this.nodes.set(node, {
        points: points.slice(0, -1).map(({ samples: _samples, ...point }) => point),
        open: reopened(last),
        lastAt: last.at,
      });
    }
  }

  /** Saves every minute still being filled (the app is stopping); later samples of the same minute replace it. */
  flush(): void {
    if (!this.store) return;
    for (const [node, entry] of this.nodes) if (entry.open) this.store.save(node, { ...closed(entry.open), samples: entry.open.samples });
  }

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
    while (this.nodes.size > this.maxNodes) {
      const gone = this.nodes.keys().next().value!;
      this.nodes.delete(gone);
      this.store?.forget(gone);
    }
    entry.lastAt = sample.at;
    const minute = Math.floor(sample.at / CLUSTER_HISTORY_STEP_MS) * CLUSTER_HISTORY_STEP_MS;
    if (entry.open && entry.open.at !== minute) this.close(node, entry);
    entry.open ??= { at: minute, sums: zeroes(), counts: zeroes(), samples: 0 };
    entry.open.samples++;
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
    // The store forgets old minutes once a minute (a machine gone quiet keeps none past 24 h either).
    if (this.store && minute > this.prunedAt) {
      this.prunedAt = minute;
      this.store.prune(oldest);
    }
  }

  /** Ends the entry's open minute: a point kept, and saved. */
  private close(node: string, entry: NodeEntry): void {
    const open = entry.open!;
    const point = closed(open);
    entry.points.push(point);
    entry.open = null;
    this.store?.save(node, { ...point, samples: open.samples });
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
