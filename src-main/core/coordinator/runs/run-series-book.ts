/**
 * The coordinator's memory of each run's series (samples/s, and each member's CPU, RAM and GPUs from its
 * heartbeats), so the run view draws the whole run after a page reload, when opened late, or after the
 * coordinator restarted. The composition root (coordinator-service.ts) subscribes it to the change feed like any
 * subscriber (run snapshots as they progress, worker snapshots at most once a second), so it costs nothing on
 * the heartbeat path. Kept in the state database with the run's other telemetry: a run's series are written
 * when they changed, at most every SERIES_SAVE_MS while it trains (less often for a run whose series hold more than
 * SAVE_POINTS points, so the bytes written stay about the same), when it ends and when the coordinator stops, and
 * put back at start (run-series-saved.ts checks them) — a crash loses at most the last interval's points.
 * Bounded: each series thinned to MAX_SERIES_POINTS, the workers per run and the runs kept capped.
 */
import { MAX_RESOURCE_WORKERS, appendResources, type ResourceHistory } from '../../../../src-shared/resources/worker-resources';
import { recordRun, type RunSeries, type ThroughputSeries } from '../../../../src-shared/runs/run-series';
import type { RunSnapshot, WorkerSnapshot } from '../../../../src-shared/training';
import type { CoordinatorChange, CoordinatorStore, RestoredState } from '../common';
import { parseSavedSeries } from './run-series-saved';

/** Runs whose series are kept; the one touched longest ago goes first. */
export const MAX_SERIES_RUNS = 32;
/** A training run's series are written at most this often (monotonic ms); an ended run's at once. */
export const SERIES_SAVE_MS = 15_000;
/** Points (samples/s points and resource samples) one save interval covers: a run holding more waits longer between saves. */
export const SAVE_POINTS = 10_000;

export interface RunSeriesBookOptions {
  /** Monotonic ms, for the save cadence. */
  monotonic?: () => number;
  /** Told why a saved row was not put back (default: console.warn). */
  warn?: (message: string) => void;
}

interface RunEntry {
  throughput: ThroughputSeries | undefined;
  resources: Map<number, ResourceHistory>;
  /**
   * The members of its current generation while it is live. Once it ended, its last members until each one's
   * first sample from after the end: worker snapshots go out at most once a second, so the sample a member took
   * just before the end can come after the run's ended snapshot, and the page draws it.
   */
  members: Set<number>;
  endedAt: number | null;
  /** Changed since it was last saved, and when that was (monotonic ms). */
  dirty: boolean;
  savedAt: number;
  /** How long after `savedAt` the next save of a training run is due (grows with the series' size). */
  saveEveryMs: number;
}

export class RunSeriesBook {
  /** Insertion order is the order the runs were last touched in (re-inserted on each new point). */
  private readonly runs = new Map<string, RunEntry>();
  private readonly monotonic: () => number;
  private readonly warn: (message: string) => void;
  private store: Pick<CoordinatorStore, 'saveSeries'> | null = null;

  constructor(opts: RunSeriesBookOptions = {}) {
    this.monotonic = opts.monotonic ?? (() => performance.now());
    this.warn = opts.warn ?? ((message) => console.warn(`warning: ${message}`));
  }

  /**
   * What the state database kept (RestoredState.series): each row checked, a bad one refused with a line that
   * names the run and why (its charts start empty), never an error; the newest MAX_SERIES_RUNS kept.
   */
  restore(saved: RestoredState['series']): void {
    const good: RunSeries[] = [];
    for (const row of saved ?? []) {
      const parsed = parseSavedSeries(row.runId, row.saved);
      if (parsed.ok) good.push(parsed.series);
      else this.warn(`the saved samples/s and resource series of run ${row.runId} in the state database were not put back (${parsed.reason}); its charts start from now`);
    }
    const newest = (s: RunSeries) => Math.max(s.throughput?.at.at(-1) ?? -Infinity, ...Object.values(s.resources).map((h) => h.samples.at(-1)?.at ?? -Infinity));
    for (const s of good.sort((a, b) => newest(a) - newest(b))) {
      this.touch(s.runId, { throughput: s.throughput ?? undefined, resources: new Map(Object.entries(s.resources).map(([id, h]) => [Number(id), h])), members: new Set(), endedAt: null, dirty: false, savedAt: this.monotonic(), saveEveryMs: SERIES_SAVE_MS });
    }
  }

  /** From now on, changed series are written to `store` (at the cadence above). */
  attachStore(store: Pick<CoordinatorStore, 'saveSeries'>): void {
    this.store = store;
  }

  /** Writes every series changed since its last save (the coordinator stops; nothing is left for a restart to lose). */
  flush(): void {
    for (const runId of this.runs.keys()) this.save(runId);
  }

  /** One change of the feed: run snapshots add samples/s points, worker snapshots its members' resources. */
  take(change: CoordinatorChange): void {
    if (change.type === 'run') this.takeRun(change.run);
    else if (change.type === 'workers') this.takeWorkers(change.workers);
    else if (change.type === 'runDeleted') this.runs.delete(change.runId);
    if (change.type === 'run' && change.run.endedAt !== null) this.save(change.run.id);
    if (change.type !== 'run' && change.type !== 'workers') return;
    const now = this.monotonic();
    // An ended run's last samples are written at once: nothing else will come to carry them to the database.
    for (const [runId, entry] of this.runs) if (entry.dirty && (entry.endedAt !== null || now - entry.savedAt >= entry.saveEveryMs)) this.save(runId);
  }

  /** A run's series so far (empty for a run it keeps nothing of: one from before a coordinator restart). */
  series(runId: string): RunSeries {
    const entry = this.runs.get(runId);
    return { runId, throughput: entry?.throughput ?? null, resources: Object.fromEntries(entry?.resources ?? []) };
  }

  private takeRun(run: RunSnapshot): void {
    const entry = this.entry(run.id);
    if (run.endedAt === null) {
      entry.members = new Set(run.workerIds);
      entry.endedAt = null;
    } else if (entry.endedAt === null) {
      if (run.workerIds.length > 0) entry.members = new Set(run.workerIds);
      entry.endedAt = run.endedAt;
    }
    const next = recordRun(entry.throughput, run);
    if (next !== entry.throughput) {
      entry.throughput = next;
      entry.dirty = true;
      this.touch(run.id, entry);
    }
  }

  private takeWorkers(workers: readonly WorkerSnapshot[]): void {
    for (const entry of this.runs.values()) {
      if (entry.members.size === 0) continue;
      for (const w of workers) {
        if (!w.resources || !entry.members.has(w.id)) continue;
        if (entry.endedAt !== null && w.resources.at > entry.endedAt) {
          entry.members.delete(w.id); // its samples from now on are after the run
          continue;
        }
        const before = entry.resources.get(w.id);
        if (!before && entry.resources.size >= MAX_RESOURCE_WORKERS) continue;
        const after = appendResources(before, w.node, w.resources);
        if (after === before) continue;
        entry.resources.set(w.id, after);
        entry.dirty = true;
      }
    }
  }

  private entry(runId: string): RunEntry {
    let entry = this.runs.get(runId);
    if (!entry) {
      entry = { throughput: undefined, resources: new Map(), members: new Set(), endedAt: null, dirty: false, savedAt: this.monotonic(), saveEveryMs: SERIES_SAVE_MS };
      this.touch(runId, entry);
    }
    return entry;
  }

  private save(runId: string): void {
    const entry = this.runs.get(runId);
    if (!entry?.dirty || !this.store?.saveSeries) return;
    entry.dirty = false;
    entry.savedAt = this.monotonic();
    let points = entry.throughput?.at.length ?? 0;
    for (const h of entry.resources.values()) points += h.samples.length;
    entry.saveEveryMs = SERIES_SAVE_MS * Math.max(1, points / SAVE_POINTS);
    try {
      this.store.saveSeries(this.series(runId));
    } catch (error) {
      // A full disk must not stop the feed: the series stay in memory and are tried again at the next change.
      entry.dirty = true;
      this.warn(`could not save the samples/s series of run ${runId}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private touch(runId: string, entry: RunEntry): void {
    this.runs.delete(runId);
    this.runs.set(runId, entry);
    while (this.runs.size > MAX_SERIES_RUNS) this.runs.delete(this.runs.keys().next().value!);
  }
}
