/**
 * Local SGD that keeps the model good (issue 24, item 3): `auto` picks the shortest local-SGD period whose
 * communication fits its budget, which a slow link stretches to hundreds of steps; this rule bounds the period by
 * what it does to the model instead. At each average the trainer reports the members' drift (gpu_share_period.py):
 * the largest over ranks of ‖θ_local − θ_avg‖ / ‖θ_avg‖ just before the average, and the steps it grew over.
 *  - over DRIFT_BOUND: the period is shortened in the running trainer (a retune, no relaunch) — halved at least,
 *    to period × bound / drift when that is shorter (drift grows about linearly in the steps between averages
 *    while the members follow different data, so that lands under the bound in one move);
 *  - hysteresis: the shortened period becomes the run's cap; auto never lengthens the period past it again, for
 *    any link (capByDrift), so a link that speeds up cannot undo what the model showed;
 *  - a drift grown over other than the period in force (the warm-up's every-step averages, the first average after
 *    a change) is not judged.
 * Pure; the coordinator applies it (src-main/core/coordinator/drift-watch.ts), a table tests it
 * (test/unit/scheduling/drift-bound.test.ts).
 */
import type { CommDecision } from './comm-types';

/**
 * Largest drift allowed at an average (2 %). A well-tuned SGD step moves the weights by ~1e-3 of their norm (the
 * usual update/weight ratio), so members that diverge outright reach 2 % in ~20 steps, and members that only see
 * different noise (drift ~ √steps) in a few hundred: the first is about the H ≤ 16–32 at which Lin et al.
 * ("Don't use large mini-batches, use local SGD") found local SGD as accurate as mini-batch SGD, the second lets
 * a slow link keep long periods when the members agree. 1 % would halve the allowed divergence for a model that
 * is, after averaging, within 1 % of every member either way.
 */
export const DRIFT_BOUND = 0.02;

/**
 * Post-local-SGD warm-up: steps (1-based, from the run's start) that average after every step before the chosen
 * period applies (GPU_SHARE_LOCAL_SGD_WARMUP). The first steps from a random start move the weights fastest, so
 * members that trained apart there would drift furthest (Lin et al. start local SGD only after that phase);
 * 100 is torch's own PostLocalSGDState example (start_localSGD_iter=100) and costs 100 averages, the
 * communication of 100 DDP steps, once per run.
 */
export const LOCAL_SGD_WARMUP_STEPS = 100;

export interface DriftInput {
  /** The local-SGD period in force. */
  period: number;
  /** The reported drift (a fraction) and the steps it grew over. */
  drift: number;
  driftSteps: number;
  /** The run's cap so far (null: none). */
  cap: number | null;
  bound?: number;
}

export interface DriftVerdict {
  /** The period to retune to; null: keep the one in force. */
  period: number | null;
  /** The run's cap after this report. */
  cap: number | null;
  /** Why, for the decision list ("period 18 → 9: drift 3.1 % over the 2 % bound"); null when nothing to say. */
  why: string | null;
}

/** "3.1 %", "0.40 %". */
export function driftPct(fraction: number): string {
  const p = fraction * 100;
  return p < 1 ? `${p.toFixed(2)} %` : `${p.toFixed(1).replace(/\.0$/, '')} %`;
}

/** The rule: keep, or the shorter period a drift over the bound asks for, and the cap it leaves. */
export function boundByDrift(input: DriftInput): DriftVerdict {
  const bound = input.bound ?? DRIFT_BOUND;
  const { period, drift, cap } = input;
  if (input.driftSteps !== period || !(drift > bound)) return { period: null, cap, why: null };
  const over = `drift ${driftPct(drift)} over the ${driftPct(bound)} bound`;
  if (period <= 1) return { period: null, cap: 1, why: `period 1 kept: ${over}, and nothing averages more often` };
  const next = Math.max(1, Math.min(Math.floor(period / 2), Math.floor((period * bound) / drift)));
  return { period: next, cap: Math.min(cap ?? next, next), why: `period ${period} → ${next}: ${over}` };
}

/**
 * A local-SGD share of a step spent communicating re-figured for another period: an average costs the same, so its
 * seconds per step scale by from / to (share = comm / (comm + compute)). Null stays null.
 */
export function shareAtPeriod(share: number | null, from: number, to: number): number | null {
  if (share === null || share >= 1) return share;
  const r = (share / (1 - share)) * (from / to);
  return r / (1 + r);
}

/**
 * An `auto` decision held to the run's cap: a local-SGD period longer than the cap becomes the cap, its share of
 * a step re-figured for the shorter period (an average's cost is the same; it comes that many times more often)
 * and its reason saying so. Anything else is returned as is.
 */
export function capByDrift(d: CommDecision, cap: number | null | undefined, bound = DRIFT_BOUND): CommDecision {
  if (cap == null || d.strategy !== 'local-sgd' || d.localSgdPeriod === null || d.localSgdPeriod <= cap) return d;
  return {
    ...d,
    localSgdPeriod: cap,
    commShare: shareAtPeriod(d.commShare, d.localSgdPeriod, cap),
    reason: `${d.reason}; held at every ${cap} steps, the period the members' drift (over the ${driftPct(bound)} bound at longer ones) allows`,
  };
}
