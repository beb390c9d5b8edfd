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
import { COMM_SHARE_BUDGET, decideComm, describeStrategy } from '../../../src-shared/scheduling/comm-choice';
import { orderRing, type RingPlan } from '../../../src-shared/scheduling/ring-order';
import type { MemberTorch } from '../../../src-shared/scheduling/comm-choice';
import type { CommDecision, CommSetting, MeasuredComm, TrainerCommStats } from '../../../src-shared/scheduling/comm-types';
import type { RunMemberHolding } from '../../../src-shared/training';
import type { RunApplierDeps } from './run-applier';
import { memberHoldings, type RunRecord } from './run-record';

/** The ring for the planned members: their order, the store-host preference, the slowest ring link and its note. */
export function planRing(deps: Pick<RunApplierDeps, 'links'>, planned: readonly RunMemberHolding[]): RingPlan {
  return orderRing(planned.map((m) => ({ workerId: m.workerId, node: m.node })), deps.links?.() ?? []);
}

/**
 * What relaunching costs, in seconds: a cold start of Python and torch on every member (the issue measured 6.24 s
 * median across hosts) plus the steps since the last checkpoint. A running generation relaunches for a better
 * strategy only when the communication that saves over the steps left is worth more.
 */
export const RELAUNCH_COST_S = 10;
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
 * The step a decision goes by: what this run's trainer reported (remembered for later runs of the same
 * trainer), else what an earlier run of it reported (trainer-step-memory.ts), else null (blind).
 */
export function stepForDecision(deps: Pick<RunApplierDeps, 'stepMemory'>, run: RunRecord): { stats: TrainerCommStats | null; remembered: boolean } {
  const reported = run.telemetry.commStats();
  if (reported) {
    const own = withMeasured(reported, run.commMeasured, run.commMeasured ? null : deps.stepMemory?.recall(run.spec));
    deps.stepMemory?.remember(run.spec, own);
    return { stats: own, remembered: false };
  }
  const prior = deps.stepMemory?.recall(run.spec) ?? null;
  return { stats: prior, remembered: prior !== null };
}

/** Each ring member's torch as its join said (a CPU run's PowerSGD needs torch 2 on all of them). */
function memberTorch(deps: Pick<RunApplierDeps, 'workers'>, ring: RingPlan): MemberTorch[] {
  return ring.order.map((id) => {
    const w = deps.workers.get(id);
    return { node: w?.node ?? `worker ${id}`, torchVersion: w?.torchVersion ?? null };
  });
}

/** The strategy generation `run.generation` trains with (call once the generation number is advanced). */
export function decideGenerationComm(
  deps: Pick<RunApplierDeps, 'workers'>,
  run: RunRecord,
  ring: RingPlan,
  requested: CommSetting = run.spec.comm ?? 'auto',
  localSgdPeriod: number | null = run.spec.localSgdPeriod ?? null,
  stats: TrainerCommStats | null = run.telemetry.commStats(),
): CommDecision {
  return decideComm({
    requested,
    localSgdPeriod,
    stats,
    slowest: ring.slowest,
    members: ring.order.length,
    backend: run.spec.useGpus ? 'nccl' : 'gloo',
    memberTorch: memberTorch(deps, ring),
    generation: run.generation,
  });
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

/** Steps the current generation has trained (its newest step past the one it resumed from). */
function stepsTrained(run: RunRecord): number {
  const p = run.telemetry.progress();
  return p ? p.step - (p.resumedFrom ?? 0) : 0;
}

/** Seconds per step spent communicating at `share` of a step whose compute takes `computeS`. */
function commSeconds(share: number, computeS: number): number {
  return share >= 1 ? Number.POSITIVE_INFINITY : (share * computeS) / (1 - share);
}

/**
 * A running `auto` generation looked at again when what it was decided from changed (the trainer reported its
 * step, a link was measured again): the fresh decision when the caller should relaunch with it, else null.
 * It relaunches when the strategy in force is clearly wrong now — decided blind, or spending over twice the
 * budget of a step communicating — and the communication saved over the steps left outweighs a relaunch.
 * Otherwise the generation's decision gains the new numbers in place (the run view shows them), saying why it
 * was kept. Cheap when nothing changed: the inputs are keyed.
 */
export function recheckComm(deps: Pick<RunApplierDeps, 'links' | 'stepMemory' | 'workers'>, run: RunRecord): CommDecision | null {
  noteMeasured(deps, run);
  const current = run.comm;
  if (run.state !== 'running' || run.pendingRestart || (run.spec.comm ?? 'auto') !== 'auto') return null;
  if (!current || current.generation !== run.generation || run.workerIds.length < 2) return null;
  const reported = run.telemetry.commStats();
  const links = deps.links?.() ?? [];
  if (!reported || links.length === 0) return null;
  const measured = run.commMeasured ?? null;
  const blind = current.commShare === null;
  const measuredNow = measured !== null && measured.generation === run.generation && measured.strategy === current.strategy;
  if (blind && !measuredNow && stepsTrained(run) < MEASURE_WAIT_STEPS) return null; // its comm_s is one step away
  const key = `${run.generation}:${links.length}:${Math.max(...links.map((l) => l.measuredAt))}:${reported.gradBytes}:${reported.stepComputeS}:${measured?.seconds}`;
  if (run.commCheckKey === key) return null;
  run.commCheckKey = key;
  const stats = withMeasured(reported, measured, measured ? null : deps.stepMemory?.recall(run.spec));
  deps.stepMemory?.remember(run.spec, stats);
  const ring = planRing(deps, memberHoldings(run));
  const fresh = decideGenerationComm(deps, run, ring, undefined, undefined, stats);
  if (fresh.commShare === null) return null;
  if (fresh.strategy === current.strategy && fresh.localSgdPeriod === current.localSgdPeriod) {
    run.comm = fresh;
    return null;
  }
  // What the strategy in force costs per step now, against what the fresh one would.
  const kept = decideGenerationComm(deps, run, ring, current.strategy, current.localSgdPeriod, stats);
  const keptShare = kept.commShare ?? 0;
  // Measured over the budget re-decides; modelled, only clearly wrong (twice the budget) does.
  if (!blind && keptShare <= (measuredNow ? 1 : 2) * COMM_SHARE_BUDGET) {
    if (measuredNow) {
      const within = `${describeStrategy(current)} kept: as measured it spends ${(keptShare * 100).toFixed(1)} % of a step communicating, within the budget`;
      run.comm = { ...kept, requested: 'auto', reason: `${within}; afresh it would be ${describeStrategy(fresh)}: ${fresh.reason}` };
    }
    return null;
  }
  const progress = run.telemetry.progress();
  const left = progress?.totalSteps != null ? Math.max(0, progress.totalSteps - progress.step) : ASSUMED_STEPS_LEFT;
  const saved = (commSeconds(keptShare, stats.stepComputeS) - commSeconds(fresh.commShare, stats.stepComputeS)) * left;
  if (saved >= RELAUNCH_COST_S) return fresh;
  run.comm = {
    ...kept,
    requested: 'auto',
    reason: `${describeStrategy(current)} kept: ${describeStrategy(fresh)} would save about ${saved.toFixed(1)} s over the ${left} steps left, less than a relaunch costs (about ${RELAUNCH_COST_S} s); ${fresh.reason}`,
  };
  return null;
}
