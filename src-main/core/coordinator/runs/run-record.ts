/**
 * The coordinator's live record of a run: the public snapshot's fields plus the bookkeeping its generations
 * need (members and their processes, a relaunch waiting for proof of life, the output and loss history).
 */
import type { ResidencyVerdict, RunMemberHolding, RunProject, RunSnapshot, RunSpec, RunState, ShardMap } from '../../../../src-shared/training';
import type { MeasuredComm } from '../../../../src-shared/scheduling/comm-types';
import { RunOutputLog } from './run-output-log';
import type { LaunchPlan } from '../../../../src-shared/worker-protocol';
import type { DataFile } from '../../../../src-shared/projects/data-shards';
import { RunTelemetry } from './run-telemetry';

// Fields of the record that store-handover.ts and run-project-gate.ts keep (defined here so neither file and
// this one import each other).
/** The store host's launcher of an older generation, still running when that generation was told to stop. */
export interface StoreDraining {
  workerId: number;
  generation: number;
}

/** Start instructions held back until the old store is gone. */
export interface HeldStarts {
  generation: number;
  /** Monotonic ms after which they go regardless. */
  until: number;
  plans: Map<number, LaunchPlan>;
}

/** The gate's bookkeeping on a run, beside RunProject (which the snapshot shows and the store keeps). */
export interface ProjectGateState {
  /** Worker id → the incarnation it was told to prepare in (a machine that joins again is told again). */
  asked: Map<number, number>;
  /** Worker id → when it was last told (monotonic ms): one that failed is told again PREPARE_RETRY_MS later. */
  askedAt: Map<number, number>;
  /** Shard mode: the data folder's files (from the manifest); null in replicate mode or when not known. */
  dataFiles: DataFile[] | null;
}

export interface MemberStatus {
  started: boolean;
  pid: number | null;
  exit: { exitCode: number | null; signal: number | null } | null;
  /** Monotonic ms at which its start was first handed out in a heartbeat answer; null until then. */
  startSentAt: number | null;
  /** Its node, and the GPUs (indices on that node) it holds for this generation; empty for a CPU member. */
  node: string;
  gpuIndices: number[];
}

export type LaunchWhy = 'start' | 'scale' | 'shrink' | 'failure' | 'restart' | 'resume';

export interface RunRecord extends Omit<RunSnapshot, 'lossHistory' | 'metrics' | 'generationMarks' | 'workerRows' | 'workerFailures'> {
  members: Map<number, MemberStatus>;
  /** Members reported progress since run.progress was computed. */
  progressStale: boolean;
  launchedBy: LaunchWhy | null;
  /**
   * A member's process failed and the generation will be relaunched once every other member has proved it is
   * alive (heartbeated since), or has been declared failed: when a rank dies because its peer's machine died,
   * this relaunches once, without the dead machine, instead of twice.
   */
  pendingRestart: { cause: string; since: number; waitingFor: Set<number> } | null;
  /** The curve, generation marks and per-worker rows, from every progress line (run-telemetry.ts). */
  telemetry: RunTelemetry;
  output: RunOutputLog;
  /** Monotonic ms at which a settled re-plan of this run is due (joins are batched for one heartbeat interval). */
  reconcileDueAt: number | null;
  /** The member hosting this generation's c10d store (on its agent's one rdzvPort); null while nobody trains it. */
  rdzvHostId: number | null;
  /** The inputs a blind comm decision was last looked at again with (generation-comm.ts recheckBlindComm). */
  commCheckKey?: string;
  /** The trainer's newest `comm_s` and the ring's slowest link when it arrived (generation-comm.ts noteMeasured). */
  commMeasured?: (MeasuredComm & { generation: number }) | null;
  /** Monotonic ms the decision in force was made (a launch, retune or relaunch): the re-decision rule's dwell. */
  commDecidedAt?: number;
  /** The last period change sent to the running trainers (its sequence number, comm-update instructions). */
  commRetuneSeq?: number;
  /** The longest local-SGD period auto may choose, set when a drift over the bound shortened it (drift-watch.ts). */
  driftCap?: number;
  /** The last drift report judged (generation:step). */
  driftKey?: string;
  /** Why the re-decision rule asked for the relaunch now under way (generation-launch.ts lists it as such). */
  commRelaunch?: string;
  /** Monotonic ms the run's ring was last probed on evidence or age (link-evidence.ts), and the last figure weighed. */
  linkCheckedAt?: number;
  evidenceKey?: string;
  /** Epoch ms a probe was asked for on the run's own evidence; its re-decision waits for it (generation-comm.ts). */
  awaitingProbeSince?: number;
  /** The store host's launcher of a stopped generation, while it may still listen (store-handover.ts). */
  storeDraining?: StoreDraining | null;
  /** The other members' starts, held until that old store is gone (store-handover.ts). */
  heldStarts?: HeldStarts | null;
  /** A project run's prepare bookkeeping and shard-mode file list (run-project-gate.ts). */
  projectGate?: ProjectGateState;
}

export const ENDED: ReadonlySet<RunState> = new Set(['finished', 'failed', 'stopped']);

export function newRunRecord(id: string, spec: RunSpec, startedAt: number, now: () => number): RunRecord {
  return {
    id,
    spec: { ...spec, command: [...spec.command], env: { ...spec.env } },
    state: 'waiting',
    stateCause: 'waiting for workers',
    generation: 0,
    restartsUsed: 0,
    startedAt,
    endedAt: null,
    workerIds: [],
    members: new Map(),
    progressStale: false,
    launchedBy: null,
    pendingRestart: null,
    shardHistory: [],
    progress: null,
    telemetry: new RunTelemetry({ now }),
    residency: {},
    rdzvEndpoint: null,
    output: new RunOutputLog(),
    reconcileDueAt: null,
    rdzvHostId: null,
    comm: null,
    linkNote: null,
  };
}

/** A record from a snapshot kept before a restart (member ids as they were, no member processes known yet). */
export function restoreRunRecord(snapshot: RunSnapshot, outputTail: string, now: () => number, outputTimes: readonly (number | null)[] = []): RunRecord {
  const run = newRunRecord(snapshot.id, snapshot.spec, snapshot.startedAt, now);
  run.state = snapshot.state;
  run.stateCause = snapshot.stateCause;
  run.generation = snapshot.generation;
  // The generation's members as they were (the failover grace may keep them; run-controller.ts clears them otherwise).
  run.workerIds = [...snapshot.workerIds];
  run.restartsUsed = snapshot.restartsUsed;
  run.endedAt = snapshot.endedAt;
  run.shardHistory = snapshot.shardHistory.map((m) => Object.freeze({ ...m, shards: Object.freeze(m.shards.map((s) => Object.freeze({ ...s }))) as ShardMap['shards'] }));
  run.progress = snapshot.progress ? { ...snapshot.progress } : null;
  run.telemetry.restore(snapshot);
  if (ENDED.has(snapshot.state)) run.telemetry.onRunEnded(snapshot.state);
  run.residency = { ...snapshot.residency };
  run.rdzvEndpoint = snapshot.rdzvEndpoint;
  // The last decision, for the run view until the next generation decides afresh (a kept generation keeps it).
  run.comm = snapshot.comm ? { ...snapshot.comm } : null;
  // The trainer's measured comm_s as it was: auto's next decision goes by it instead of the model alone.
  run.commMeasured = snapshot.commMeasured ? { ...snapshot.commMeasured } : null;
  run.commDecisions = (snapshot.commDecisions ?? []).map((c) => ({ ...c }));
  run.linkNote = snapshot.linkNote ?? null;
  run.output.seed(outputTail, outputTimes);
  // The project snapshot and the result, as kept (coordinator-persistence.ts: a kv row per run).
  if (snapshot.project) run.project = copyProject(snapshot.project);
  if (snapshot.artifact) run.artifact = { ...snapshot.artifact };
  if (snapshot.tags?.length) run.tags = [...snapshot.tags];
  if (snapshot.note) run.note = snapshot.note;
  return run;
}

export function newMember(node: string, gpuIndices: readonly number[]): MemberStatus {
  return { started: false, pid: null, exit: null, startSentAt: null, node, gpuIndices: [...gpuIndices] };
}

/** What the current generation's members hold (nothing while the run waits, pauses or has ended). */
export function memberHoldings(run: RunRecord): RunMemberHolding[] {
  if (run.state !== 'running') return [];
  return run.workerIds.flatMap((workerId) => {
    const m = run.members.get(workerId);
    return m ? [{ workerId, node: m.node, gpuIndices: [...m.gpuIndices] }] : [];
  });
}

/** A live run that could take more workers than it has: waiting, paused, or running below max_workers. */
export function wantsMore(run: RunRecord): boolean {
  return run.state !== 'running' || run.workerIds.length < run.spec.maxWorkers;
}

/** Leaves the run with no generation on any worker (paused, waiting or ended). */
export function clearMembers(run: RunRecord): void {
  run.pendingRestart = null;
  run.workerIds = [];
  run.members = new Map();
  run.rdzvHostId = null;
  run.heldStarts = null;
}

/**
 * The run's progress from its telemetry (every progress line; heartbeats fill gaps). Done when the run is read
 * or sent, not on every heartbeat or line, so a heartbeat costs the same with 1 or 1,000 members. Returns the
 * furthest step when it changed anything.
 */
export function refreshProgress(run: RunRecord): number | null {
  if (!run.progressStale) return null;
  run.progressStale = false;
  const progress = run.telemetry.progress();
  if (!progress) return null;
  run.progress = progress;
  return progress.step;
}

/**
 * A member was lost and the run relaunches (or waits for the others' proof of life first) until the new
 * generation prints its first step: what the page calls Recovering, instead of Running at the stale step.
 */
export function isRecovering(run: RunRecord): boolean {
  if (run.state !== 'running') return false;
  if (run.pendingRestart !== null) return true;
  const relaunched = run.launchedBy === 'failure' || run.launchedBy === 'restart' || run.launchedBy === 'resume';
  return relaunched && run.generation > 1 && run.telemetry.progress() === null;
}

/** A copy for the outside world (the record's progress must be refreshed first). */
export function runSnapshot(run: RunRecord): RunSnapshot {
  // An ended run's rows are frozen as its last generation left them (each says how its part ended).
  if (ENDED.has(run.state)) run.telemetry.onRunEnded(run.state);
  const telemetry = run.telemetry.snapshot();
  const residency: Record<number, ResidencyVerdict> = {};
  for (const [k, v] of Object.entries(run.residency)) residency[Number(k)] = { ...v };
  return {
    id: run.id,
    spec: { ...run.spec, command: [...run.spec.command], env: { ...run.spec.env } },
    state: run.state,
    stateCause: run.stateCause,
    generation: run.generation,
    restartsUsed: run.restartsUsed,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    workerIds: [...run.workerIds],
    // Shard maps never change once made (they are frozen), so snapshots share them instead of copying 50 × n ranges.
    shardHistory: [...run.shardHistory],
    progress: run.progress ? { ...run.progress } : null,
    lossHistory: telemetry.lossHistory,
    // Left out when the trainer printed no other numbers: a run reads the same with or without them kept.
    ...(telemetry.metrics.length > 0 ? { metrics: telemetry.metrics } : {}),
    generationMarks: telemetry.generationMarks,
    workerRows: telemetry.workerRows,
    workerFailures: telemetry.workerFailures,
    residency,
    rdzvEndpoint: run.rdzvEndpoint,
    memberHoldings: memberHoldings(run),
    comm: run.comm ? { ...run.comm } : null,
    commDecisions: (run.commDecisions ?? []).map((c) => ({ ...c })),
    commStats: run.telemetry.commStats(),
    ...(run.commMeasured ? { commMeasured: { ...run.commMeasured } } : {}),
    linkNote: run.linkNote ?? null,
    recovering: isRecovering(run),
    ...(run.project ? { project: copyProject(run.project) } : {}),
    ...(run.artifact ? { artifact: { ...run.artifact } } : {}),
    ...(run.tags?.length ? { tags: [...run.tags] } : {}),
    ...(run.note ? { note: run.note } : {}),
  };
}

/** A RunProject no caller can change the run's through. */
export function copyProject(p: RunProject): RunProject {
  return { ...p, modules: p.modules.map((m) => ({ ...m })), notes: [...p.notes], members: p.members.map((m) => ({ ...m })) };
}
