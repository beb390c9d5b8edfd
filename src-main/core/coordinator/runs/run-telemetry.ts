/**
 * What one run went through, as its run view tells it: the loss curve from every progress line every worker
 * printed (not from heartbeat samples), where each generation began, a row per worker with its own step and
 * throughput and the restarts its failures cost, and how many workers failed on the way.
 *
 * The coordinator feeds it (progress reports, or output chunks from agents that send none, generation starts,
 * heartbeat progress, failures) and copies
 * snapshot() into the run's snapshot. Pure: no timers, no I/O; the clock is passed in.
 */
import type { GenerationMark, LossPoint, MetricSeries, RunProgress, RunState, RunWorkerRow } from '../../../../src-shared/training';
import type { Progress } from '../../../../src-shared/worker-protocol';
import type { CommStrategy, TrainerCommStats } from '../../../../src-shared/scheduling/comm-types';
import type { ProgressPoint } from '../../../../src-shared/runs/progress-report';
import { parseProgressLines, type TrainerProgressLine } from '../../../platform/runs/progress-line';
import { RunLossCurve, TRUST, type PointSource } from './run-loss-curve';
import { RunMetrics } from './run-metrics';

/** Generations a run keeps marks for (oldest dropped first; a run relaunched this often has other problems). */
export const MAX_GENERATION_MARKS = 500;
/** Worker rows kept per run; past it the oldest non-member rows go. */
export const MAX_WORKER_ROWS = 1024;
/** Local ranks tracked per worker for its samples/s (torchrun --nproc_per_node is far below this). */
const MAX_RANKS_PER_WORKER = 256;

/** A progress report's point as the line it was parsed from (left-out fields are null). */
function lineOf(p: ProgressPoint): TrainerProgressLine {
  return {
    step: p.step,
    totalSteps: p.totalSteps ?? null,
    loss: p.loss ?? null,
    samplesPerSec: p.samplesPerSec ?? null,
    rank: p.rank ?? null,
    worldSize: p.worldSize ?? null,
    shard: p.shard ?? null,
    resumedFrom: p.resumedFrom ?? null,
    gradBytes: p.gradBytes ?? null,
    powersgdBytes: p.powersgdBytes ?? null,
    stepComputeS: p.stepComputeS ?? null,
    comm: p.comm ?? null,
    commS: p.commS ?? null,
    drift: p.drift ?? null,
    driftSteps: p.driftSteps ?? null,
    metrics: p.metrics ?? null,
  };
}

/** A local-sgd average's drift (`drift`, `drift_steps` on the trainer's progress line) and its step. */
export interface DriftReport {
  generation: number;
  step: number;
  drift: number;
  steps: number;
}

export interface RunTelemetrySnapshot {
  /** The run's latest progress from the current generation, or null before its first progress line. */
  progress: RunProgress | null;
  lossHistory: LossPoint[];
  /** The trainer's other numbers, a curve per name (run-metrics.ts). */
  metrics: MetricSeries[];
  generationMarks: GenerationMark[];
  workerRows: RunWorkerRow[];
  workerFailures: number;
}

interface WorkerTrack {
  row: RunWorkerRow;
  /** Latest line of each local rank in `generation` (key: rank, or -1 when the line names none). */
  ranks: Map<number, TrainerProgressLine>;
  generation: number;
  /** True once an output line gave this generation's progress: heartbeats then only fill gaps. */
  fromOutput: boolean;
  /** The unfinished last line of this worker's output, and the generation it belongs to. */
  carry: { generation: number; text: string } | null;
  touchedAt: number;
}

export interface RunTelemetryOptions {
  now?: () => number;
  maxLossPoints?: number;
}

export class RunTelemetry {
  private readonly curve: RunLossCurve;
  private readonly metrics: RunMetrics;
  private readonly now: () => number;
  private readonly workers = new Map<number, WorkerTrack>();
  private readonly marks: GenerationMark[] = [];
  /** Whether the current generation's mark still waits for its first progress line to say where it began. */
  private markProvisional = false;
  private generation = 0;
  private failures = 0;
  /** Set once the run ended: the rows are frozen (a late heartbeat no longer moves them). */
  private ended = false;
  private totalSteps: number | null = null;
  private resumedFrom: number | null = null;
  private latest: { step: number; loss: number | null; trust: number; at: number } | null = null;
  private sequence = 0;
  /** The newest trainer-reported step costs (grad_bytes, compute_s), with the generation and rank that said so. */
  private stats: { generation: number; rank: number | null; value: TrainerCommStats } | null = null;
  private measured: { rank: number | null; value: { generation: number; strategy: CommStrategy; seconds: number } } | null = null;
  /** The newest local-sgd drift (any rank's: each says the largest over ranks). */
  private drifted: DriftReport | null = null;

  constructor(options: RunTelemetryOptions = {}) {
    this.now = options.now ?? Date.now;
    this.curve = new RunLossCurve(options.maxLossPoints);
    this.metrics = new RunMetrics(options.maxLossPoints);
  }

  /**
   * What a run saved before the app restarted (its curve, marks, rows, failures): the telemetry carries on from
   * it, and the next generation (the resume) is marked after the last one saved.
   */
  restore(saved: Omit<RunTelemetrySnapshot, 'progress' | 'metrics'> & { metrics?: MetricSeries[] | undefined } & { commStats?: TrainerCommStats | null | undefined; commMeasured?: { generation: number; strategy: CommStrategy; seconds: number } | null | undefined }): void {
    for (const p of saved.lossHistory) this.curve.add(p.generation, p.step, p.loss, 'rank0');
    this.metrics.restore(saved.metrics ?? []);
    this.marks.push(...saved.generationMarks.slice(-MAX_GENERATION_MARKS).map((m) => ({ ...m })));
    this.generation = Math.max(this.generation, ...saved.generationMarks.map((m) => m.generation), ...saved.lossHistory.map((p) => p.generation));
    // Each row as it was (step, samples/s, how its part ended), not rebuilt empty: an ended run's story stays told.
    for (const row of saved.workerRows) Object.assign(this.track(row.workerId, row.node).row, { ...row, end: row.end ?? null });
    this.failures = saved.workerFailures;
    if (saved.commStats) this.stats = { generation: this.generation, rank: 0, value: { ...saved.commStats } };
    // The measured comm_s as rank 0 said it: a newer generation's figure replaces it as any newer one would.
    if (saved.commMeasured) this.measured = { rank: 0, value: { generation: saved.commMeasured.generation, strategy: saved.commMeasured.strategy, seconds: saved.commMeasured.seconds } };
  }

  /**
   * A generation starts with these members. Its mark sits at the step the curve has reached until its first
   * progress line says where it resumed from. `nodeOf` names members this run has not heard from yet.
   */
  onGeneration(generation: number, memberIds: readonly number[], at: number, cause: string, nodeOf?: (workerId: number) => string | undefined): void {
    if (generation <= this.generation) return;
    this.generation = generation;
    this.resumedFrom = null;
    this.latest = null;
    const members = new Set(memberIds);
    for (const id of memberIds) this.track(id, nodeOf?.(id) ?? `worker ${id}`);
    for (const [id, w] of this.workers) {
      const member = members.has(id);
      if (member) {
        w.row.end = null;
        delete w.row.endedAt; // back in: its earlier leaving is no longer how its part ended
      } else if (w.row.member && !w.row.end) Object.assign(w.row, { end: 'left', endedAt: at });
      w.row.member = member;
    }
    const reached = this.curve.snapshot().at(-1);
    this.marks.push({ generation, step: reached ? reached.step + 1 : 0, at, cause });
    if (this.marks.length > MAX_GENERATION_MARKS) this.marks.shift();
    this.markProvisional = true;
  }

  /** A chunk of a worker's output (raw pty text): every complete progress line in it counts. */
  onOutput(workerId: number, node: string, generation: number, text: string): void {
    const w = this.track(workerId, node);
    const carry = w.carry && w.carry.generation === generation ? w.carry.text : '';
    const parsed = parseProgressLines(text, carry);
    w.carry = parsed.carry ? { generation, text: parsed.carry } : null;
    for (const line of parsed.progress) this.takeLine(w, generation, line);
  }

  /**
   * Progress lines a worker's agent parsed and sent (a `progress` report): taken like those read from output.
   * Not both for one worker: the agent marks its output then, and onOutput is not called for it.
   */
  onProgress(workerId: number, node: string, generation: number, points: readonly ProgressPoint[]): void {
    const w = this.track(workerId, node);
    for (const p of points) this.takeLine(w, generation, lineOf(p));
  }

  /** A heartbeat's progress: the worker's newest line, used where its output said nothing (yet). */
  onHeartbeatProgress(workerId: number, node: string, progress: Progress): void {
    if (this.ended) return;
    const w = this.track(workerId, node);
    if (progress.totalSteps) this.totalSteps = progress.totalSteps;
    if (!this.accepts(progress.generation)) return;
    if (w.fromOutput && w.generation === progress.generation) return;
    this.startWorkerGeneration(w, progress.generation);
    w.ranks.set(-1, {
      step: progress.step,
      totalSteps: progress.totalSteps ?? null,
      loss: progress.loss,
      samplesPerSec: progress.samplesPerSec,
      rank: null,
      worldSize: null,
      shard: null,
      resumedFrom: progress.resumedFrom,
      gradBytes: null,
      stepComputeS: null,
      comm: null,
    });
    this.refreshRow(w);
    this.record(progress.generation, progress.step, progress.loss, 'heartbeat', progress.resumedFrom);
  }

  /** A worker failed while the run was live (at `at`, epoch ms); `causedRestart` when its failure cost the run a restart. */
  onWorkerFailed(workerId: number, node: string, causedRestart: boolean, at: number | null = null): void {
    const w = this.track(workerId, node);
    this.failures += 1;
    if (causedRestart) w.row.restartsCaused += 1;
    w.row.end = 'failed';
    if (at !== null) w.row.endedAt = at;
  }

  /**
   * The run ended: each row keeps its step and samples/s, and says how its part ended — the last generation's
   * members 'finished' with a finished run ('stopped' otherwise), a failed worker still 'failed'.
   */
  onRunEnded(state: RunState): void {
    if (this.ended) return;
    this.ended = true;
    for (const w of this.workers.values()) {
      if (w.row.end) continue;
      w.row.end = !w.row.member ? 'left' : state === 'finished' ? 'finished' : 'stopped';
    }
  }

  snapshot(): RunTelemetrySnapshot {
    return {
      progress: this.progress(),
      lossHistory: this.curve.snapshot(),
      metrics: this.metrics.snapshot(),
      generationMarks: this.marks.map((m) => ({ ...m })),
      workerRows: [...this.workers.values()].map((w) => ({ ...w.row })).sort((a, b) => a.workerId - b.workerId),
      workerFailures: this.failures,
    };
  }

  /** The latest progress alone, without copying the curve (what snapshot().progress would be). */
  progress(): RunProgress | null {
    if (!this.latest) return null;
    let samplesPerSec: number | null = null;
    for (const w of this.workers.values()) {
      if (!w.row.member || w.generation !== this.generation || w.row.samplesPerSec === null) continue;
      samplesPerSec = (samplesPerSec ?? 0) + w.row.samplesPerSec;
    }
    const { step, loss, at } = this.latest;
    return { step, totalSteps: this.totalSteps, loss, samplesPerSec, resumedFrom: this.resumedFrom, at };
  }

  /**
   * What the trainer reported about one step (gradient bytes, compute seconds): the current generation's once it
   * has said, rank 0's preferred; until then the previous generation's (the same model, so the same bytes), so
   * the coordinator can decide the next generation's strategy before that generation prints anything.
   */
  commStats(): TrainerCommStats | null {
    return this.stats ? { ...this.stats.value } : null;
  }

  /** The newest `comm_s` a trainer reported (what one round of `strategy` cost), rank 0's preferred; null: none. */
  commMeasured(): { generation: number; strategy: CommStrategy; seconds: number } | null {
    return this.measured ? { ...this.measured.value } : null;
  }

  /** The newest drift a local-sgd trainer reported at an average; null: none. */
  driftReported(): DriftReport | null {
    return this.drifted ? { ...this.drifted } : null;
  }

  /** Lines of the current generation count; an older one's only until the current one has trained a step. */
  private accepts(generation: number): boolean {
    // Announced before its launch, so a newer one here is a race with onGeneration: begin it, members kept.
    if (generation > this.generation) {
      const members = [...this.workers.values()].filter((w) => w.row.member).map((w) => w.row.workerId);
      this.onGeneration(generation, members, this.now(), 'generation started');
    }
    if (generation === this.generation) return true;
    return this.latest === null;
  }

  private takeLine(w: WorkerTrack, generation: number, line: TrainerProgressLine): void {
    if (line.totalSteps !== null) this.totalSteps = line.totalSteps;
    if (!this.accepts(generation)) return;
    this.takeStats(generation, line);
    if (!w.fromOutput || w.generation !== generation) {
      this.startWorkerGeneration(w, generation);
      w.ranks.clear(); // a heartbeat's sample stood in until now
      w.fromOutput = true;
    }
    if (generation === this.generation) w.row.member = true;
    const key = line.rank ?? -1;
    if (w.ranks.has(key) || w.ranks.size < MAX_RANKS_PER_WORKER) w.ranks.set(key, line);
    this.refreshRow(w);
    const source = line.rank === 0 ? 'rank0' : 'rank';
    this.metrics.add(generation, line.step, line.metrics, source, line.resumedFrom);
    this.record(generation, line.step, line.loss, source, line.resumedFrom);
  }

  private takeStats(generation: number, line: TrainerProgressLine): void {
    if (line.drift != null && line.driftSteps != null && (!this.drifted || generation > this.drifted.generation || line.step > this.drifted.step)) {
      this.drifted = { generation, step: line.step, drift: line.drift, steps: line.driftSteps };
    }
    if (line.commS != null && line.comm !== null) {
      const m = this.measured;
      if (!m || generation > m.value.generation || (generation === m.value.generation && (line.rank === 0 || m.rank !== 0))) {
        this.measured = { rank: line.rank, value: { generation, strategy: line.comm, seconds: line.commS } };
      }
    }
    if (line.gradBytes === null || line.stepComputeS === null) return;
    const held = this.stats;
    const newer = !held || generation > held.generation;
    if (!newer && (generation < held.generation || (held.rank === 0 && line.rank !== 0))) return;
    const powersgd = line.powersgdBytes != null && line.powersgdBytes > 0 ? { powersgdBytes: line.powersgdBytes } : {};
    this.stats = { generation, rank: line.rank, value: { gradBytes: line.gradBytes, stepComputeS: line.stepComputeS, ...powersgd } };
  }

  private record(generation: number, step: number, loss: number | null, source: PointSource, resumedFrom: number | null): void {
    if (loss !== null) this.curve.add(generation, step, loss, source, resumedFrom);
    if (generation !== this.generation) return;
    if (resumedFrom !== null) this.resumedFrom = resumedFrom;
    if (this.markProvisional) {
      const mark = this.marks.at(-1);
      if (mark && mark.generation === generation) mark.step = resumedFrom ?? step;
      this.markProvisional = false;
    }
    const trust = TRUST[source];
    const l = this.latest;
    if (!l || step > l.step) this.latest = { step, loss, trust, at: this.now() };
    else if (step === l.step && trust > l.trust && loss !== null) this.latest = { ...l, loss, trust };
  }

  private startWorkerGeneration(w: WorkerTrack, generation: number): void {
    if (w.generation === generation) return;
    w.generation = generation;
    w.ranks.clear();
    w.fromOutput = false;
  }

  /** The worker's row from its ranks' latest lines: furthest step, the lowest rank's loss there, samples/s summed. */
  private refreshRow(w: WorkerTrack): void {
    let best: TrainerProgressLine | null = null;
    let samplesPerSec: number | null = null;
    for (const line of w.ranks.values()) {
      if (!best || line.step > best.step || (line.step === best.step && (line.rank ?? Infinity) < (best.rank ?? Infinity))) best = line;
      if (line.samplesPerSec !== null) samplesPerSec = (samplesPerSec ?? 0) + line.samplesPerSec;
    }
    w.row.step = best?.step ?? null;
    w.row.loss = best?.loss ?? null;
    w.row.samplesPerSec = samplesPerSec;
  }

  private track(workerId: number, node: string): WorkerTrack {
    let w = this.workers.get(workerId);
    if (!w) {
      w = {
        row: { workerId, node, member: false, step: null, loss: null, samplesPerSec: null, restartsCaused: 0, end: null },
        ranks: new Map(),
        generation: 0,
        fromOutput: false,
        carry: null,
        touchedAt: 0,
      };
      this.workers.set(workerId, w);
      this.dropOldRows();
    } else if (!w.row.node.length || w.row.node === `worker ${workerId}`) {
      w.row.node = node;
    }
    w.touchedAt = ++this.sequence;
    return w;
  }

  private dropOldRows(): void {
    if (this.workers.size <= MAX_WORKER_ROWS) return;
    let oldest: [number, WorkerTrack] | null = null;
    for (const entry of this.workers) if (!entry[1].row.member && (!oldest || entry[1].touchedAt < oldest[1].touchedAt)) oldest = entry;
    if (oldest) this.workers.delete(oldest[0]);
  }
}
