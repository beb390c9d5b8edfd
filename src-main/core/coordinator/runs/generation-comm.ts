/**
 * How a generation's members talk (issue 16): the ring order from the measured links, and the communication
 * strategy from that ring's slowest link and what the trainer reported about its step. Decided afresh at
 * every generation launch, so a changed link matrix or a newly reported step changes the next generation; said
 * in the run's output every generation and as an event only when it changed. A running generation is looked at
 * again when its inputs change (a generation that had to start blind in plain DDP, before the trainer reported
 * its step or the links were measured; a link measured again; the trainer measured what its communication
 * costs, `comm_s`): a clearly better strategy relaunches it when that pays for the relaunch, otherwise the
 * decision just gains the new numbers. A measured cost beats the model (which was ~15 % low over a shaped link):
 * it is tied to the link it was measured on, remembered per trainer, and scales the model for every strategy.
 */
import { decideComm, describeStrategy } from '../../../../src-shared/scheduling/comm-choice';
import { DOWN_BUDGET, MIN_DWELL_MS, redecide } from '../../../../src-shared/scheduling/comm-redecide';
import { noteDecision, sendRetune } from './comm-decisions';
import { watchRingLinks } from './ring-link-watch';
import { boundDrift } from './drift-watch';
import { capByDrift } from '../../../../src-shared/scheduling/drift-bound';
import { orderRing, type RingPlan } from '../../../../src-shared/scheduling/ring-order';
import type { MemberTorch } from '../../../../src-shared/scheduling/comm-choice';
import type { CommDecision, CommSetting, MeasuredComm, TrainerCommStats } from '../../../../src-shared/scheduling/comm-types';
import type { RunMemberHolding, RunSpec } from '../../../../src-shared/training';
import type { RunApplierDeps } from './run-applier-deps';
import { memberHoldings, type RunRecord } from './run-record';

/** The ring for the planned members: their order, the store-host preference, the slowest ring link and its note. */
export function planRing(deps: Pick<RunApplierDeps, 'links'>, planned: readonly RunMemberHolding[]): RingPlan {
  return orderRing(planned.map((m) => ({ workerId: m.workerId, node: m.node })), deps.links?.() ?? []);
}

/** What relaunching costs, and the steps assumed left when the trainer does not say (comm-redecide.ts). */
export { RELAUNCH_COST_S } from '../../../../src-shared/scheduling/comm-redecide';
/** Steps left assumed when the trainer does not say its total_steps. */
export const ASSUMED_STEPS_LEFT = 1000;
/**
 * Steps past its first a blind generation trains while waiting for the trainer's `comm_s` before it re-decides
 * (gpu_share_comm.py reports a ddp step's from the second step on): one more step of plain DDP buys a decision
 * from the measured cost, not the model. A trainer that never reports comm_s costs that one step.
 */
export const MEASURE_WAIT_STEPS = 1;

/**
 * Takes a new `comm_s` of any running run (auto or not: an explicit run's measurement serves later runs of its
 * trainer), tied to the ring's slowest link when it first arrived (a link measured again later must not re-scale
 * a figure taken over the old one), kept on the run and remembered for the trainer. Plans the ring only for a
 * new figure.
 */
function noteMeasured(deps: Pick<RunApplierDeps, 'links' | 'stepMemory'>, run: RunRecord): void {
  const fresh = run.telemetry.commMeasured();
  const held = run.commMeasured;
  if (!fresh || (held && held.generation === fresh.generation && held.strategy === fresh.strategy && held.seconds === fresh.seconds)) return;
  if (run.state !== 'running' || run.workerIds.length < 2 || (deps.links?.() ?? []).length === 0) return;
  const link = planRing(deps, memberHoldings(run)).slowest;
  if (!link || link.mbps === null || !(link.mbps > 0)) return;
  run.commMeasured = { ...fresh, mbps: link.mbps, rttMs: link.rttMs };
  const reported = run.telemetry.commStats();
  if (reported) deps.stepMemory?.remember(run.spec, withMeasured(reported, run.commMeasured));
}

/** What the decision goes by: `stats` with the measured cost (this run's, else what `fallback` had measured). */
function withMeasured(stats: TrainerCommStats, measured: (MeasuredComm & { generation?: number }) | null | undefined, fallback?: TrainerCommStats | null): TrainerCommStats {
  const m = measured ? { strategy: measured.strategy, seconds: measured.seconds, mbps: measured.mbps, rttMs: measured.rttMs } : fallback?.measured;
  return m ? { ...stats, measured: m } : stats;
}

/**
 * A run kept from before a coordinator restart: what its trainer reported about its step, and what it measured its
 * communication to cost over which link, are remembered again for later runs of the same trainer (oldest first,
 * so the newest run's figures win), as they were before the restart.
 */
export function rememberRestored(deps: Pick<RunApplierDeps, 'stepMemory'>, run: RunRecord): void {
  const reported = run.telemetry.commStats();
  if (reported) deps.stepMemory?.remember(run.spec, withMeasured(reported, run.commMeasured));
}

/**
 * The step a decision goes by: what this run's trainer reported (with what it measured, else what `prior` had
 * measured), else what an earlier run of it reported (`prior`, trainer-step-memory.ts), else null (blind).
 * `remembered`: the figures are the earlier run's. Pure: the launch remembers a reported step for later runs.
 */
export function stepFor(
  reported: TrainerCommStats | null,
  measured: (MeasuredComm & { generation?: number }) | null | undefined,
  prior: TrainerCommStats | null,
): { stats: TrainerCommStats | null; remembered: boolean } {
  if (reported) return { stats: withMeasured(reported, measured, measured ? null : prior), remembered: false };
  return { stats: prior, remembered: prior !== null };
}

/** Each ring member's torch as its join said (a CPU run's PowerSGD needs torch 2 on all of them). */
export function memberTorch(record: (id: number) => { node: string; torchVersion?: string | null } | undefined, ring: RingPlan): MemberTorch[] {
  return ring.order.map((id) => {
    const w = record(id);
    return { node: w?.node ?? `worker ${id}`, torchVersion: w?.torchVersion ?? null };
  });
}

/** What a generation's comm decision reads of its run: the settings, the generation number, the drift's cap. */
export interface CommFacts {
  spec: Pick<RunSpec, 'comm' | 'localSgdPeriod' | 'useGpus'>;
  generation: number;
  driftCap?: number;
}

/** The strategy generation `run.generation` trains with (call once the generation number is advanced). */
export function decideGenerationComm(
  deps: Pick<RunApplierDeps, 'pool'>,
  run: RunRecord,
  ring: RingPlan,
  requested: CommSetting = run.spec.comm ?? 'auto',
  localSgdPeriod: number | null = run.spec.localSgdPeriod ?? null,
  stats: TrainerCommStats | null = run.telemetry.commStats(),
  budget?: number,
): CommDecision {
  return commFor(run, ring, memberTorch((id) => deps.pool.worker(id), ring), stats, requested, localSgdPeriod, budget);
}

/** The strategy generation `facts.generation` trains with over `ring`. Pure. */
export function commFor(
  facts: CommFacts,
  ring: RingPlan,
  torch: MemberTorch[],
  stats: TrainerCommStats | null,
  requested: CommSetting = facts.spec.comm ?? 'auto',
  localSgdPeriod: number | null = facts.spec.localSgdPeriod ?? null,
  budget?: number,
): CommDecision {
  const d = decideComm({
    ...(budget !== undefined ? { budget } : {}),
    requested,
    localSgdPeriod,
    stats,
    slowest: ring.slowest,
    members: ring.order.length,
    backend: facts.spec.useGpus ? 'nccl' : 'gloo',
    memberTorch: torch,
    generation: facts.generation,
  });
  return requested === 'auto' ? capByDrift(d, facts.driftCap) : d; // what the members' drift allows (drift-bound.ts)
}

/** "generation 3 trains with local-sgd every 8 steps: DDP would spend …" */
export function commLine(d: CommDecision): string {
  return `generation ${d.generation} trains with ${describeStrategy(d)}: ${d.reason}`;
}

/**
 * The event text when the strategy (or its period) differs from the previous generation's; null when it did not
 * change, or for a run's first decision (its output says that one).
 */
export function commChanged(previous: CommDecision | null | undefined, next: CommDecision): string | null {
  if (!previous || (previous.strategy === next.strategy && previous.localSgdPeriod === next.localSgdPeriod)) return null;
  return `${commLine(next)} (was ${describeStrategy(previous)})`;
}

/** How long a disputed link's probe is waited for before deciding on the figures at hand (a probe takes ~2-5 s). */
export const PROBE_WAIT_MS = 10_000;

/**
 * Whether the run waits for the probe its own figures asked for (ring-link-watch.ts): a figure that disputes the
 * map is not decided on before the probe says whether the link or the trainer changed. Done when a probe of a
 * member pair has reported since, or after PROBE_WAIT_MS.
 */
function awaitingProbe(deps: Pick<RunApplierDeps, 'clock' | 'links'>, run: RunRecord): boolean {
  const since = run.awaitingProbeSince;
  if (since === undefined) return false;
  const members = new Set(run.workerIds);
  const probed = (deps.links?.() ?? []).some((l) => members.has(l.fromId) && members.has(l.toId) && (l.source ?? 'probe') === 'probe' && l.measuredAt >= since);
  if (!probed && deps.clock.now() - since < PROBE_WAIT_MS) return true;
  run.awaitingProbeSince = undefined;
  return false;
}

/** Steps the current generation has trained (its newest step past the one it resumed from). */
function stepsTrained(run: RunRecord): number {
  const p = run.telemetry.progress();
  return p ? p.step - (p.resumedFrom ?? 0) : 0;
}

/**
 * A running `auto` generation looked at again (every tick; cheap when nothing changed: the inputs are keyed).
 * First its ring links are kept measured (ring-link-watch.ts); then, when what it was decided from changed (the
 * trainer reported its step or its comm_s, a link was measured again), the re-decision rule (comm-redecide.ts)
 * keeps it, retunes a local-SGD period in the running trainers, or returns the decision to relaunch with. Each
 * change, and each kept decision's reason, goes in the run's decision list.
 */
export function recheckComm(deps: Pick<RunApplierDeps, 'clock' | 'links' | 'stepMemory' | 'pool' | 'surveyLinks' | 'messages'> & { heartbeatIntervalMs?: number }, run: RunRecord): CommDecision | null {
  const current = run.comm;
  const live = run.state === 'running' && !run.pendingRestart && run.workerIds.length >= 2;
  const probing = live && current?.generation === run.generation ? watchRingLinks(deps, run, planRing(deps, memberHoldings(run))) : null;
  if (probing) {
    deps.messages.event('links-remeasured', 'info', `Run "${run.spec.name}": measuring its links again: ${probing}`, { runId: run.id, generation: run.generation });
    run.awaitingProbeSince = deps.clock.now();
  }
  noteMeasured(deps, run);
  if (!live || (run.spec.comm ?? 'auto') !== 'auto' || !current || current.generation !== run.generation) return null;
  if (boundDrift(deps, run)) return null;
  if (awaitingProbe(deps, run)) return null;
  const reported = run.telemetry.commStats();
  const links = deps.links?.() ?? [];
  if (!reported || links.length === 0) return null;
  const measured = run.commMeasured ?? null;
  const blind = current.commShare === null;
  const measuredNow = measured !== null && measured.generation === run.generation && measured.strategy === current.strategy;
  if (blind && !measuredNow && stepsTrained(run) < MEASURE_WAIT_STEPS) return null; // its comm_s is one step away
  const since = deps.clock.monotonic() - (run.commDecidedAt ?? 0);
  const dwelling = since < MIN_DWELL_MS;
  const key = `${run.generation}:${links.length}:${Math.max(...links.map((l) => l.measuredAt))}:${reported.gradBytes}:${reported.stepComputeS}:${measured?.seconds}:${dwelling}`;
  if (run.commCheckKey === key) return null;
  run.commCheckKey = key;
  const stats = withMeasured(reported, measured, measured ? null : deps.stepMemory?.recall(run.spec));
  deps.stepMemory?.remember(run.spec, stats);
  const ring = planRing(deps, memberHoldings(run));
  const up = decideGenerationComm(deps, run, ring, undefined, undefined, stats);
  if (up.commShare === null) return null;
  const down = decideGenerationComm(deps, run, ring, undefined, undefined, stats, DOWN_BUDGET);
  const kept = decideGenerationComm(deps, run, ring, current.strategy, current.localSgdPeriod, stats);
  const progress = run.telemetry.progress();
  const stepsLeft = progress?.totalSteps != null ? Math.max(0, progress.totalSteps - progress.step) : ASSUMED_STEPS_LEFT;
  const r = redecide({ current, currentShare: kept.commShare, blind, up, down, sinceChangeMs: since, stepsLeft, computeS: stats.stepComputeS });
  if (r.action === 'keep' || !r.next) {
    const same = up.strategy === current.strategy && up.localSgdPeriod === current.localSgdPeriod;
    run.comm = same ? up : { ...kept, requested: 'auto', reason: `${r.why}; afresh it would be ${describeStrategy(up)}: ${up.reason}` };
    if (!same) noteDecision(deps, run, run.comm, 'kept');
    return null;
  }
  if (r.action === 'relaunch') {
    run.commRelaunch = r.why;
    return r.next;
  }
  const next = { ...r.next, reason: `${r.why}: ${r.next.reason}` };
  const told = sendRetune(deps, run, next);
  const previous = current;
  run.comm = next;
  run.commDecidedAt = deps.clock.monotonic();
  noteDecision(deps, run, next, 'retune');
  const changed = commChanged(previous, next);
  if (changed) deps.messages.event('comm-changed', 'info', `Run "${run.spec.name}" ${changed}; told ${told.join(', ') || 'no member'}, no relaunch`, { runId: run.id, generation: run.generation });
  return null;
}
