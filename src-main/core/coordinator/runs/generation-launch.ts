/**
 * Applying a generation planGeneration decided (generation-plan.ts): the run takes its members, store host, comm
 * and shard map; the old generation is told to stop and every member its start (held for the old store when it
 * must wait, store-handover.ts); the run's output, events and notifications say what happened. Nothing is decided
 * here.
 */
import { noteDecision } from './comm-decisions';
import { commChanged, commLine } from './generation-comm';
import type { PlannedGeneration } from './generation-plan';
import type { RunApplierDeps } from './run-applier-deps';
import { newMember, refreshProgress, type LaunchWhy, type RunRecord } from './run-record';
import { plural } from '../common';

const MAX_SHARD_HISTORY = 50;

/** What launching needs of the applier: its dependencies and the steps it shares with the other decisions. */
export interface GenerationLauncher {
  readonly deps: RunApplierDeps;
  refresh(run: RunRecord): void;
  stopMembers(run: RunRecord, reason: string): void;
  say(run: RunRecord, text: string): void;
  emit(run: RunRecord): void;
}

export function launchGeneration(ap: GenerationLauncher, run: RunRecord, plan: PlannedGeneration, why: LaunchWhy): void {
  const { pool } = ap.deps;
  const cause = plan.shardMap.cause;
  ap.refresh(run);
  const previous = run.state === 'running' ? run.generation : null;
  if (previous !== null) ap.stopMembers(run, `generation ${previous + 1} replaces it: ${cause}`);
  run.generation = plan.generation;
  // Plan order (what the controller compares a new plan with); the ring order lives in the shards and NODE_RANK.
  run.workerIds = plan.members.map((m) => m.workerId);
  run.members = new Map(plan.members.map((m) => [m.workerId, newMember(m.node, m.gpuIndices)]));
  run.rdzvHostId = plan.storeHostId;
  run.heldStarts = plan.holdStartsUntil !== null ? { generation: run.generation, until: plan.holdStartsUntil, plans: new Map() } : null;
  if (plan.holdStartsUntil === null) run.storeDraining = null;
  run.reconcileDueAt = null;
  run.launchedBy = why;
  run.pendingRestart = null;
  const wasPaused = run.state === 'paused';
  run.state = 'running';
  run.stateCause = `generation ${run.generation} on ${plural(plan.ring.order.length, 'worker')}`;
  const previousComm = run.comm ?? null;
  applyComm(ap.deps, run, plan);
  run.rdzvEndpoint = plan.rdzvEndpoint;
  if (plan.dataSplit && run.project) run.project.dataSplit = plan.dataSplit;
  run.shardHistory.push(plan.shardMap);
  run.telemetry.onGeneration(run.generation, plan.ring.order, plan.shardMap.at, cause, (id) => pool.worker(id)?.node);
  if (run.shardHistory.length > MAX_SHARD_HISTORY) run.shardHistory.splice(0, run.shardHistory.length - MAX_SHARD_HISTORY);

  refreshProgress(run); // the step the generation starts from (the warm-up is the run's start only)
  for (const start of plan.starts) {
    if (start.held) run.heldStarts!.plans.set(start.workerId, start.plan);
    else pool.worker(start.workerId)!.mailbox.queue({ kind: 'start', plan: start.plan });
    run.residency[start.workerId] = run.spec.useGpus
      ? { status: 'pending', detail: 'waiting for the probe after step 0', pid: null, usedMib: null, checkedAt: null }
      : { status: 'not-applicable', detail: 'CPU run: no GPU asked for', pid: null, usedMib: null, checkedAt: null };
  }
  tell(ap, run, plan, { why, previous, wasPaused, previousComm });
}

/** The run takes the generation's comm decision, listed as a launch (or the relaunch the re-decision asked for). */
function applyComm(deps: RunApplierDeps, run: RunRecord, plan: PlannedGeneration): void {
  const { stats, remembered } = plan.step;
  // A reported step is remembered for later runs of the trainer; an earlier run's counts as used (most recent last).
  if (stats && !remembered) deps.stepMemory?.remember(run.spec, stats);
  else if (remembered) deps.stepMemory?.recall(run.spec);
  const comm = plan.comm;
  run.comm = comm;
  run.commDecidedAt = deps.clock.monotonic();
  noteDecision(deps, run, run.commRelaunch ? { ...comm, reason: `${run.commRelaunch}: ${comm.reason}` } : comm, run.commRelaunch ? 'relaunch' : 'launch');
  run.commRelaunch = undefined;
  run.linkNote = plan.ring.note;
}

/** The run's output, events and notifications about the launch; then a forming ring's stale links are measured again. */
function tell(ap: GenerationLauncher, run: RunRecord, plan: PlannedGeneration, was: { why: LaunchWhy; previous: number | null; wasPaused: boolean; previousComm: RunRecord['comm'] }): void {
  const { messages } = ap.deps;
  const { why, previous, wasPaused } = was;
  const { comm, shardMap: map, dataSplit: split, ring } = plan;
  const cause = map.cause;
  const members = ring.order;
  ap.say(run, `${previous === null && !wasPaused ? 'launching' : 'relaunching as'} generation ${run.generation} on ${plural(members.length, 'worker')} (${cause})`);
  const where = map.shards.map((s) => `${s.node} [${s.start}, ${s.end})`).join(', ');
  const ctx = { runId: run.id, generation: run.generation };
  ap.say(run, commLine(comm));
  if (split) ap.say(run, `data files: ${Object.entries(split).map(([node, names]) => `${node} ${plural(names.length, 'file')}`).join(', ')}`);
  if (ring.note) ap.say(run, ring.note);
  const changed = commChanged(was.previousComm, comm);
  if (changed) messages.event('comm-changed', 'info', `Run "${run.spec.name}" ${changed}`, ctx);
  messages.event('shards-rebalanced', 'info', `Run "${run.spec.name}" generation ${run.generation} (${cause}): ${where}`, ctx);
  if (wasPaused) {
    messages.event('run-resumed', 'info', `Run "${run.spec.name}" resumed on ${plural(members.length, 'worker')} (min_workers ${run.spec.minWorkers}, max_workers ${run.spec.maxWorkers})`, ctx);
    messages.notify('Run "' + run.spec.name + '" resumed', `${plural(members.length, 'worker')} training again, from the last checkpoint.`, 'info', { view: 'runs', runId: run.id });
  } else if (why === 'failure' || why === 'restart') {
    messages.event('run-restarted', 'warning', `Run "${run.spec.name}" restarted as generation ${run.generation} (${cause}); restart ${run.restartsUsed} of ${run.spec.maxRestarts}`, ctx);
  }
  // A forming ring's stale links are measured again (link-survey.ts); a changed link reaches this generation
  // through recheckComm, so the start does not wait. Not after a failure: probes would compete with the
  // survivors' relaunch, the one start that must be quick (issue 16's 1.5 s).
  if (members.length > 1 && why !== 'failure' && why !== 'restart') ap.deps.surveyLinks?.remeasure(members);
  ap.emit(run);
}
