/**
 * Starting a generation of one run: who hosts the rendezvous store at which address (decided before anything
 * changes, so a generation no member can host is not started at all), the ring order and communication
 * strategy (generation-comm.ts), the shard map, and a start instruction with its launch plan — the GPUs the
 * member holds included — for every member.
 */
import { assignShards } from '../../../../src-shared/shards';
import type { RunMemberHolding, ShardMap } from '../../../../src-shared/training';
import { commChanged, commLine, decideGenerationComm, planRing, stepForDecision } from './generation-comm';
import { buildLaunchPlan, formatEndpoint } from './launch-plan';
import { chooseRendezvous } from '../links';
import type { RunApplierDeps } from './run-applier';
import { newMember, refreshProgress, type LaunchWhy, type RunRecord } from './run-record';
import { launchProjectFor, splitForGeneration } from './run-project-gate';
import { mustHoldStarts, STORE_HANDOVER_MAX_MS } from './store-handover';
import { plural } from '../common';
import { noteDecision } from './comm-decisions';

const MAX_SHARD_HISTORY = 50;

/** One member of a planned generation: a worker and the GPUs (indices on its node) it holds. */
export type PlannedMember = RunMemberHolding;

/** What launching needs of the applier: its dependencies and the steps it shares with the other decisions. */
export interface GenerationLauncher {
  readonly deps: RunApplierDeps;
  hold(run: RunRecord, reason: string): void;
  refresh(run: RunRecord): void;
  stopMembers(run: RunRecord, reason: string): void;
  say(run: RunRecord, text: string): void;
  emit(run: RunRecord): void;
}

/** The rendezvous ports other running runs' stores take, per worker that hosts one. */
export type StorePorts = ReadonlyMap<number, ReadonlySet<number>>;

/** The rendezvous ports other running runs' stores take, per worker hosting one (their endpoints end in the port). */
export function storePortsTaken(run: RunRecord, liveRuns: readonly RunRecord[]): Map<number, Set<number>> {
  const taken = new Map<number, Set<number>>();
  for (const other of liveRuns) {
    if (other === run || other.state !== 'running' || other.rdzvHostId === null || !other.rdzvEndpoint) continue;
    const port = Number(other.rdzvEndpoint.slice(other.rdzvEndpoint.lastIndexOf(':') + 1));
    taken.set(other.rdzvHostId, (taken.get(other.rdzvHostId) ?? new Set()).add(port));
  }
  return taken;
}

/** The ports a worker offers for stores that no other run's store takes (an older agent offers its rdzvPort alone). */
function freeStorePorts(w: { rdzvPort: number; rdzvPorts?: number[] }, taken: ReadonlySet<number> | undefined): number[] {
  return (w.rdzvPorts ?? [w.rdzvPort]).filter((p) => !taken?.has(p));
}

export function launchGeneration(ap: GenerationLauncher, run: RunRecord, planned: PlannedMember[], cause: string, why: LaunchWhy, storePorts: StorePorts): void {
  const { workers, messages, clock } = ap.deps;
  // A worker can host as many runs' stores as it offers ports (one per GPU set it may train); with all taken, none.
  const busyHosts = new Set(planned.map((m) => m.workerId).filter((id) => freeStorePorts(workers.get(id)!, storePorts.get(id)).length === 0));
  // Well-connected members stand next to each other on the ring; the shards and GPU_SHARE_NODE_RANK follow it.
  const ring = planRing(ap.deps, planned);
  const members = ring.order;
  const addresses = chooseRendezvous(
    members.map((id) => {
      const r = workers.get(id)!;
      return { workerId: id, node: r.node, seenFrom: r.address, coordinatorAddr: r.coordinatorAddr, sameMachine: r.sameMachine, advertiseHost: r.advertiseHost, rdzvPort: r.rdzvPort };
    }),
    { trustAdvertised: ap.deps.trustAdvertised, busyHosts, preferHosts: ring.storeHostOrder },
  );
  if (!addresses.ok) {
    ap.hold(run, addresses.reason);
    return;
  }
  ap.refresh(run);
  const previous = run.state === 'running' ? run.generation : null;
  if (previous !== null) ap.stopMembers(run, `generation ${previous + 1} replaces it: ${cause}`);
  run.generation += 1;
  // Plan order (what the controller compares a new plan with); the ring order lives in the shards and NODE_RANK.
  run.workerIds = planned.map((m) => m.workerId);
  run.members = new Map(planned.map((m) => [m.workerId, newMember(m.node, m.gpuIndices)]));
  run.rdzvHostId = addresses.hostWorkerId;
  // The same host's old store may still listen: the others start once it is gone (store-handover.ts).
  const holdStarts = mustHoldStarts(run, addresses.hostWorkerId);
  run.heldStarts = holdStarts ? { generation: run.generation, until: clock.monotonic() + STORE_HANDOVER_MAX_MS, plans: new Map() } : null;
  if (!holdStarts) run.storeDraining = null;
  run.reconcileDueAt = null;
  run.launchedBy = why;
  run.pendingRestart = null;
  const wasPaused = run.state === 'paused';
  run.state = 'running';
  run.stateCause = `generation ${run.generation} on ${plural(members.length, 'worker')}`;
  const previousComm = run.comm ?? null;
  const step = stepForDecision(ap.deps, run);
  const decided = decideGenerationComm(ap.deps, run, ring, undefined, undefined, step.stats);
  const comm = step.remembered && decided.commShare !== null ? { ...decided, reason: `${decided.reason} (the step as an earlier run of this trainer reported it)` } : decided;
  run.comm = comm;
  run.commDecidedAt = clock.monotonic();
  noteDecision(ap.deps, run, run.commRelaunch ? { ...comm, reason: `${run.commRelaunch}: ${comm.reason}` } : comm, run.commRelaunch ? 'relaunch' : 'launch');
  run.commRelaunch = undefined;
  run.linkNote = ring.note;

  const storeHost = workers.get(addresses.hostWorkerId)!;
  run.rdzvEndpoint = formatEndpoint(ap.deps.rdzvHostOverride ?? addresses.endpointHost, freeStorePorts(storeHost, storePorts.get(addresses.hostWorkerId))[0]!);
  const shards = assignShards(run.spec.samples, members);
  // Shard mode: the data folder's files over the members in ring order, as few moved from the last split as can be.
  const split = splitForGeneration(run, members.map((id) => workers.get(id)!.node));
  const map: ShardMap = {
    generation: run.generation,
    totalSamples: run.spec.samples,
    shards: shards.map((s) => ({ ...s, node: workers.get(s.workerId)!.node })),
    at: clock.now(),
    cause,
  };
  for (const s of map.shards) Object.freeze(s);
  Object.freeze(map.shards);
  run.shardHistory.push(Object.freeze(map));
  run.telemetry.onGeneration(run.generation, members, map.at, cause, (id) => workers.get(id)?.node);
  if (run.shardHistory.length > MAX_SHARD_HISTORY) run.shardHistory.splice(0, run.shardHistory.length - MAX_SHARD_HISTORY);

  refreshProgress(run); // the step the generation starts from (the warm-up is the run's start only)
  for (const s of shards) {
    const rec = workers.get(s.workerId)!;
    const plan = buildLaunchPlan({
      runId: run.id,
      generation: run.generation,
      spec: run.spec,
      workerId: s.workerId,
      node: rec.node,
      shardStart: s.start,
      shardEnd: s.end,
      numWorkers: members.length,
      rdzvEndpoint: run.rdzvEndpoint,
      localAddr: addresses.localAddrs.get(s.workerId) ?? rec.advertiseHost,
      rdzvHost: s.workerId === addresses.hostWorkerId,
      gpuIndices: run.spec.useGpus ? run.members.get(s.workerId)!.gpuIndices : null,
      comm,
      nodeRank: members.indexOf(s.workerId),
      startStep: run.progress?.step ?? 0,
      project: launchProjectFor(run, rec.node),
    });
    if (holdStarts && s.workerId !== addresses.hostWorkerId) run.heldStarts!.plans.set(s.workerId, plan);
    else rec.mailbox.queue({ kind: 'start', plan });
    run.residency[s.workerId] = run.spec.useGpus
      ? { status: 'pending', detail: 'waiting for the probe after step 0', pid: null, usedMib: null, checkedAt: null }
      : { status: 'not-applicable', detail: 'CPU run: no GPU asked for', pid: null, usedMib: null, checkedAt: null };
  }

  ap.say(run, `${previous === null && !wasPaused ? 'launching' : 'relaunching as'} generation ${run.generation} on ${plural(members.length, 'worker')} (${cause})`);
  const where = map.shards.map((s) => `${s.node} [${s.start}, ${s.end})`).join(', ');
  const ctx = { runId: run.id, generation: run.generation };
  ap.say(run, commLine(comm));
  if (split) ap.say(run, `data files: ${Object.entries(split).map(([node, names]) => `${node} ${plural(names.length, 'file')}`).join(', ')}`);
  if (ring.note) ap.say(run, ring.note);
  const changed = commChanged(previousComm, comm);
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
