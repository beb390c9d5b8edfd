/**
 * The coordinator's store, on the state database: what the coordinator hands over as it happens goes into the
 * repositories of src-main/core/state/ (acknowledged or batched as each repository says), and what they kept
 * comes back as the coordinator's RestoredState at the next start.
 *
 * Runs arrive as whole snapshots (on every state change, progress at most once a second); only what is new
 * since the last one is written: shard maps and loss points past those already kept, changed worker rows.
 * A run's series (samples/s, members' resources) come from the run series book at its own bounded cadence, one
 * kv row per run, and go with the run.
 */
import { COMM_STRATEGIES } from '../../src-shared/scheduling/comm-types';
import type { RunSeries } from '../../src-shared/runs/run-series';
import type { LossPoint, MetricPoint, RunSnapshot, RunWorkerRow } from '../../src-shared/training';
import { type CoordinatorStore, MAX_EVENTS, type RestoredState, type StoredWorker } from './coordinator/common';
import { MAX_RUNS_KEPT, RunOutputLog } from './coordinator/runs';
import { COUNTERS, type StateDb } from './state';

/** The kv row that keeps the epoch of the coordinator that last ran on this state database. */
export const COORDINATOR_EPOCH_KEY = 'coordinator:epoch';
const holdingsKey = (runId: string): string => `run-holdings:${runId}`;
/** The kv row with a run's communication decision, step figures and link note (what its page says about comm). */
const commKey = (runId: string): string => `run-comm:${runId}`;
type RunComm = Pick<RunSnapshot, 'comm' | 'commStats' | 'commMeasured' | 'linkNote' | 'commDecisions'>;
/** The kv row with a run's project snapshot record and its result (RunSnapshot.project, .artifact). */
const projectKey = (runId: string): string => `run-project:${runId}`;
type RunProjectRow = Pick<RunSnapshot, 'project' | 'artifact'>;
/** The kv row with a run's samples/s and resource series (run-series-book.ts). */
const seriesKey = (runId: string): string => `run-series:${runId}`;

/** A kept measured comm_s when it is one (a damaged row is dropped: auto then goes by the model, as before it was measured). */
function keptMeasured(m: RunComm['commMeasured']): RunComm['commMeasured'] {
  const ok = (x: unknown, min = 0) => typeof x === 'number' && Number.isFinite(x) && x >= min;
  if (!m || !(COMM_STRATEGIES as readonly unknown[]).includes(m.strategy) || !ok(m.seconds) || !ok(m.mbps, 1e-9) || !ok(m.generation) || (m.rttMs !== null && !ok(m.rttMs))) return null;
  return { generation: m.generation, strategy: m.strategy, seconds: m.seconds, mbps: m.mbps, rttMs: m.rttMs };
}

const samePoint = (a: LossPoint, b: LossPoint): boolean => a.step === b.step && a.loss === b.loss && a.generation === b.generation;
const sameMetricPoint = (a: MetricPoint, b: MetricPoint): boolean => a.step === b.step && a.value === b.value && a.generation === b.generation;

/**
 * Where `points` first differs from what was `written`: its index and the step to rewrite from (the earlier of the
 * two points there), or null when they are the same.
 */
function firstDifference<P extends { step: number }>(points: readonly P[], written: readonly P[], same: (a: P, b: P) => boolean): { d: number; from: number } | null {
  let d = 0;
  while (d < points.length && d < written.length && same(points[d]!, written[d]!)) d++;
  if (d === points.length && d === written.length) return null;
  return { d, from: Math.min(points[d]?.step ?? Infinity, written[d]?.step ?? Infinity) };
}

interface RunProgressMark {
  lastMapGeneration: number;
  /** Step written for each generation's mark (a mark's step is settled by its generation's first progress line). */
  marks: Map<number, number>;
  /** The loss curve as last written (snapshot points are fresh copies, so keeping them is safe). */
  loss: RunSnapshot['lossHistory'];
  /** Each metric's points as last written (fresh copies too). */
  metrics: Map<string, MetricPoint[]>;
  /** The last row written for each worker (snapshot rows are fresh copies, so keeping one is safe). */
  rows: Map<number, RunWorkerRow>;
}

export class SqliteCoordinatorStore implements CoordinatorStore {
  private readonly written = new Map<string, RunProgressMark>();
  /** Names bound in the database already (binding is first-come and never changes, so once is enough). */
  private readonly bound = new Set<string>();
  /** The member holdings last written for each run (JSON), so an unchanged snapshot writes nothing. */
  private readonly heldWritten = new Map<string, string>();
  /** The same for each run's communication decision. */
  private readonly commWritten = new Map<string, string>();
  /** The same for each run's project and artifact. */
  private readonly projectWritten = new Map<string, string>();

  constructor(
    private readonly db: StateDb,
    private readonly now: () => number = Date.now,
  ) {}

  /** What the database kept, for CoordinatorService.restore(). */
  load(): RestoredState & { names: { node: string; machineHash: string; firstFrom: string | null }[] } {
    for (const id of this.db.runs.prune(MAX_RUNS_KEPT)) this.forgetRun(id);
    const names = this.db.nodeNames.list();
    for (const n of names) this.bound.add(n.node);
    const runs = this.db.loadRuns().map((run) => {
      this.noteWritten(run);
      const log = new RunOutputLog();
      for (const chunk of this.db.output.tail(run.id)) log.append(chunk.workerId, chunk.node, chunk.data, chunk.at ?? null);
      const holdings = this.db.kv.get<RunSnapshot['memberHoldings']>(holdingsKey(run.id));
      if (holdings) this.heldWritten.set(run.id, JSON.stringify(holdings));
      const comm = this.db.kv.get<RunComm>(commKey(run.id));
      if (comm) this.commWritten.set(run.id, JSON.stringify(comm));
      const kept = comm ? { ...comm, commMeasured: keptMeasured(comm.commMeasured) } : {};
      const project = this.db.kv.get<RunProjectRow>(projectKey(run.id));
      if (project) this.projectWritten.set(run.id, JSON.stringify(project));
      const projectParts = { ...(project?.project ? { project: project.project } : {}), ...(project?.artifact ? { artifact: project.artifact } : {}) };
      return { run: { ...run, ...(holdings ? { memberHoldings: holdings } : {}), ...kept, ...projectParts }, outputTail: log.text(), outputTimes: log.times() };
    });
    return {
      runs,
      events: this.db.events.recent(MAX_EVENTS),
      lastEventSeq: this.db.events.lastSeq(),
      workers: this.db.workers.list(),
      runSeq: this.db.kv.counter(COUNTERS.runSeq),
      names,
      ...(this.db.kv.get<string>(COORDINATOR_EPOCH_KEY) ? { epoch: this.db.kv.get<string>(COORDINATOR_EPOCH_KEY) } : {}),
      series: runs.map(({ run }) => ({ runId: run.id, saved: this.savedSeries(run.id) })).filter((s) => s.saved !== undefined),
    };
  }

  /** A run's saved series as parsed JSON (checked by the series book), an Error for a row that is not JSON, undefined: none. */
  private savedSeries(runId: string): unknown {
    try {
      return this.db.kv.get<unknown>(seriesKey(runId));
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  saveSeries(series: RunSeries): void {
    // Only for a run the database keeps: a deleted or pruned run's series would be a row nothing removes.
    if (!this.written.has(series.runId)) return;
    this.db.kv.set(seriesKey(series.runId), series);
  }

  deleteRun(runId: string): void {
    this.db.runs.delete(runId);
    this.forgetRun(runId);
  }

  /** What is kept for a run outside its tables (kv rows, write marks): gone with the run, so it stays bounded. */
  private forgetRun(runId: string): void {
    this.written.delete(runId);
    this.heldWritten.delete(runId);
    this.commWritten.delete(runId);
    this.projectWritten.delete(runId);
    this.db.kv.delete(projectKey(runId));
    this.db.kv.delete(holdingsKey(runId));
    this.db.kv.delete(commKey(runId));
    this.db.kv.delete(seriesKey(runId));
  }

  saveRun(run: RunSnapshot): void {
    const { shardHistory, lossHistory, metrics, generationMarks, workerRows, ...stored } = run;
    this.saveHoldings(run);
    this.saveComm(run);
    this.saveProject(run);
    this.db.runs.save(stored);
    const mark = this.progressMark(run.id);
    for (const map of shardHistory) {
      if (map.generation <= mark.lastMapGeneration) continue;
      this.db.generations.recordShardMap(run.id, map);
      mark.lastMapGeneration = map.generation;
    }
    for (const m of generationMarks) {
      if (mark.marks.get(m.generation) === m.step) continue;
      this.db.generations.markGeneration(run.id, m);
      mark.marks.set(m.generation, m.step);
    }
    this.saveLoss(run.id, lossHistory, mark);
    for (const series of metrics ?? []) this.saveMetric(run.id, series.name, series.points, mark);
    for (const row of workerRows) this.saveRow(run.id, row, mark);
  }

  appendOutput(runId: string, workerId: number, node: string, data: string, at: number | null = null): void {
    this.db.output.append(runId, { workerId, node, data, at });
  }

  saveEvent(event: Parameters<CoordinatorStore['saveEvent']>[0]): void {
    this.db.events.append(event);
  }

  saveWorker(worker: StoredWorker): void {
    this.db.workers.save(worker);
    if (this.bound.has(worker.node)) return;
    this.db.nodeNames.bind({ node: worker.node, machineHash: worker.machineHash, firstFrom: worker.address, boundAt: this.now() });
    this.bound.add(worker.node);
  }

  forgetWorker(workerId: number): void {
    this.db.workers.remove(workerId);
  }

  workerSeen(workerId: number, at: number): void {
    this.db.workers.touch(workerId, at);
  }

  /** A run's member holdings (GPUs per member), when they changed: a restarted coordinator keeps a re-attaching generation's. */
  private saveHoldings(run: RunSnapshot): void {
    const text = JSON.stringify(run.memberHoldings ?? []);
    if (this.heldWritten.get(run.id) === text) return;
    this.heldWritten.set(run.id, text);
    this.db.kv.set(holdingsKey(run.id), run.memberHoldings ?? []);
  }

  /** A run's communication decision when it changed: an ended run's page says how it communicated after a restart. */
  private saveComm(run: RunSnapshot): void {
    const comm: RunComm = { comm: run.comm ?? null, commStats: run.commStats ?? null, commMeasured: run.commMeasured ?? null, linkNote: run.linkNote ?? null, commDecisions: run.commDecisions ?? [] };
    const text = JSON.stringify(comm);
    if (this.commWritten.get(run.id) === text) return;
    this.commWritten.set(run.id, text);
    this.db.kv.set(commKey(run.id), comm);
  }

  /** A run's project record and artifact when they changed (a run of a project keeps its snapshot across a restart). */
  private saveProject(run: RunSnapshot): void {
    if (!run.project && !run.artifact && !this.projectWritten.has(run.id)) return;
    const row: RunProjectRow = { project: run.project ?? null, artifact: run.artifact ?? null };
    const text = JSON.stringify(row);
    if (this.projectWritten.get(run.id) === text) return;
    this.projectWritten.set(run.id, text);
    this.db.kv.set(projectKey(run.id), row);
  }

  saveEpoch(epoch: string): void {
    this.db.kv.set(COORDINATOR_EPOCH_KEY, epoch);
  }

  saveRunSeq(runSeq: number): void {
    this.db.kv.raise(COUNTERS.runSeq, runSeq);
    for (const id of this.db.runs.prune(MAX_RUNS_KEPT)) this.forgetRun(id);
  }

  private progressMark(runId: string): RunProgressMark {
    let mark = this.written.get(runId);
    if (!mark) {
      mark = { lastMapGeneration: 0, marks: new Map(), loss: [], metrics: new Map(), rows: new Map() };
      this.written.set(runId, mark);
    }
    return mark;
  }

  /** A run loaded at start is already in the database: only what comes after it is new. */
  private noteWritten(run: RunSnapshot): void {
    const mark = this.progressMark(run.id);
    mark.lastMapGeneration = run.shardHistory.at(-1)?.generation ?? 0;
    for (const m of run.generationMarks) mark.marks.set(m.generation, m.step);
    mark.loss = run.lossHistory;
    for (const series of run.metrics ?? []) mark.metrics.set(series.name, series.points);
    for (const row of run.workerRows) mark.rows.set(row.workerId, row);
  }

  /**
   * The curve from its first difference with what was written on: usually the new points at its end, but a
   * point inserted before the newest (another worker's line for an earlier step, arriving late), a loss
   * replaced by a more trusted rank's, a thinned curve or a resumed generation rewrite from where they differ.
   * Writing only what came after the newest written point lost such a curve's head (it began at step 7).
   */
  private saveLoss(runId: string, points: RunSnapshot['lossHistory'], mark: RunProgressMark): void {
    const diff = firstDifference(points, mark.loss, samePoint);
    if (!diff) return;
    const { d, from } = diff;
    if (d === points.length) this.db.lossPoints.dropFromStep(runId, from);
    for (const [i, p] of points.slice(d).entries()) this.db.lossPoints.add(runId, p, i === 0 ? from : p.step);
    mark.loss = points;
  }

  /** A metric's curve from its first difference with what was written on (as saveLoss, for the same reasons). */
  private saveMetric(runId: string, name: string, points: MetricPoint[], mark: RunProgressMark): void {
    const diff = firstDifference(points, mark.metrics.get(name) ?? [], sameMetricPoint);
    if (!diff) return;
    this.db.metricPoints.replaceFrom(runId, name, diff.from, points.slice(diff.d));
    mark.metrics.set(name, points);
  }

  private saveRow(runId: string, row: RunWorkerRow, mark: RunProgressMark): void {
    const old = mark.rows.get(row.workerId);
    const sameRow =
      old !== undefined && old.member === row.member && old.restartsCaused === row.restartsCaused && old.node === row.node && (old.end ?? null) === (row.end ?? null);
    if (sameRow && old.step === row.step && old.loss === row.loss && old.samplesPerSec === row.samplesPerSec) return;
    mark.rows.set(row.workerId, row);
    // Only progress changed: batched. Membership, restarts caused, how its part ended or a new row: acknowledged.
    if (sameRow) this.db.runWorkers.setProgress(runId, row.workerId, { step: row.step, loss: row.loss, samplesPerSec: row.samplesPerSec });
    else this.db.runWorkers.save(runId, row);
  }

}

/**
 * Opens the state database in `userData`, puts back what it kept into the coordinator (before it starts) and
 * hands it everything from now on. A database that cannot be used (newer schema, not a regular file) is an
 * error that names the file: starting without it would lose runs silently.
 */
export function restoreCoordinator(
  db: StateDb,
  coordinator: { restore(state: RestoredState): void; attachStore(store: CoordinatorStore): void },
  now: () => number = Date.now,
): void {
  const store = new SqliteCoordinatorStore(db, now);
  const state = store.load();
  // Attached first, so what restoring itself says (the live run's "coordinator restarted" event and output line,
  // the restored workers' new state) is kept too: a later restart must still find it.
  coordinator.attachStore(store);
  coordinator.restore(state);
}
