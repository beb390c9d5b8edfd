/**
 * The coordinator's memory of each run's series (samples/s, and each member's CPU, RAM and GPUs from its
 * heartbeats), so the run view draws the whole run after a page reload or when opened late. It reads the
 * change feed like any subscriber (run snapshots as they progress, worker snapshots at most once a second),
 * so it costs nothing on the heartbeat path. In memory only: a coordinator restart starts them empty (the loss
 * curve is the one series kept in the state database). Bounded: each series thinned to MAX_SERIES_POINTS, the
 * workers per run and the runs kept capped.
 */
import { MAX_RESOURCE_WORKERS, appendResources, type ResourceHistory } from '../../../src-shared/resources/worker-resources';
import { recordRun, type RunSeries, type ThroughputSeries } from '../../../src-shared/runs/run-series';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import type { CoordinatorChange } from './change-feed';

/** Runs whose series are kept; the one touched longest ago goes first. */
export const MAX_SERIES_RUNS = 32;

interface RunEntry {
  throughput: ThroughputSeries | undefined;
  resources: Map<number, ResourceHistory>;
  /** The members of its current generation while it is live; empty once it ended. */
  members: Set<number>;
}

export class RunSeriesBook {
  /** Insertion order is the order the runs were last touched in (re-inserted on each new point). */
  private readonly runs = new Map<string, RunEntry>();

  /** One change of the feed: run snapshots add samples/s points, worker snapshots its members' resources. */
  take(change: CoordinatorChange): void {
    if (change.type === 'run') this.takeRun(change.run);
    else if (change.type === 'workers') this.takeWorkers(change.workers);
    else if (change.type === 'runDeleted') this.runs.delete(change.runId);
  }

  /** A run's series so far (empty for a run it keeps nothing of: one from before a coordinator restart). */
  series(runId: string): RunSeries {
    const entry = this.runs.get(runId);
    return { runId, throughput: entry?.throughput ?? null, resources: Object.fromEntries(entry?.resources ?? []) };
  }

  private takeRun(run: RunSnapshot): void {
    const entry = this.entry(run.id);
    const live = run.endedAt === null;
    entry.members = new Set(live ? run.workerIds : []);
    const next = recordRun(entry.throughput, run);
    if (next !== entry.throughput) {
      entry.throughput = next;
      this.touch(run.id, entry);
    }
  }

  private takeWorkers(workers: readonly WorkerSnapshot[]): void {
    for (const entry of this.runs.values()) {
      if (entry.members.size === 0) continue;
      for (const w of workers) {
        if (!w.resources || !entry.members.has(w.id)) continue;
        const before = entry.resources.get(w.id);
        if (!before && entry.resources.size >= MAX_RESOURCE_WORKERS) continue;
        const after = appendResources(before, w.node, w.resources);
        if (after !== before) entry.resources.set(w.id, after);
      }
    }
  }

  private entry(runId: string): RunEntry {
    let entry = this.runs.get(runId);
    if (!entry) {
      entry = { throughput: undefined, resources: new Map(), members: new Set() };
      this.touch(runId, entry);
    }
    return entry;
  }

  private touch(runId: string, entry: RunEntry): void {
    this.runs.delete(runId);
    this.runs.set(runId, entry);
    while (this.runs.size > MAX_SERIES_RUNS) this.runs.delete(this.runs.keys().next().value!);
  }
}
