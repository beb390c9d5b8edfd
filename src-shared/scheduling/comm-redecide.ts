/**
 * Whether a running `auto` generation changes how it communicates, and how (issue 24, item 2). decideComm says
 * what is best for the figures now; this rule says whether that is worth a change while the run trains, so a
 * link that flaps around a threshold does not flap the decision:
 *  - hysteresis: more traffic-saving (a longer local-SGD period, or local SGD instead of DDP) only when what is
 *    in force spends over UP_SHARE of a step communicating (1.5× the 10 % budget); less lossy (a shorter period,
 *    back to DDP) only when that choice fits DOWN_BUDGET (0.6× the budget). A link's cost must move by ×1.5 one
 *    way or ×1.67 the other before the decision does;
 *  - dwell: nothing changes within MIN_DWELL_MS of the last change (a probe during a change measures it);
 *  - a local-SGD period changes in the running trainer (`retune`, free: the agent tells the trainer, which applies
 *    it at its next average, docs/api.md "Changing the period while training"); a strategy change relaunches from
 *    the checkpoint (`relaunch`), toward less traffic only when the seconds saved over the steps left outweigh
 *    RELAUNCH_COST_S, back toward DDP only when the run has RETURN_MIN_LEFT_S of training left (the accuracy is
 *    worth one relaunch then, not for the last minute).
 * Pure; the coordinator applies it (generation-comm.ts) and a table tests it (test/unit/scheduling/comm-redecide.test.ts).
 */
import { COMM_SHARE_BUDGET, describeStrategy } from './comm-choice';
import type { CommDecision, CommStrategy } from './comm-types';

export const UP_SHARE = 1.5 * COMM_SHARE_BUDGET;
export const DOWN_BUDGET = 0.6 * COMM_SHARE_BUDGET;
export const MIN_DWELL_MS = 20_000;
/**
 * What relaunching costs, in seconds: a cold start of Python and torch on every member (6.24 s median across
 * hosts, issue 16) plus the steps since the last checkpoint.
 */
export const RELAUNCH_COST_S = 10;
/** Training left (seconds) for which going back to a less lossy strategy is worth a relaunch: six relaunches' worth. */
export const RETURN_MIN_LEFT_S = 6 * RELAUNCH_COST_S;

const ORDER: readonly CommStrategy[] = ['ddp', 'fp16', 'powersgd', 'local-sgd'];

/** Orders choices from least to most lossy: the strategy, then (local-sgd) the steps between averages. */
export function lossiness(d: Pick<CommDecision, 'strategy' | 'localSgdPeriod'>): number {
  return ORDER.indexOf(d.strategy) * 10_000 + (d.strategy === 'local-sgd' ? (d.localSgdPeriod ?? 0) : 0);
}

export interface RedecideInput {
  /** What trains now. */
  current: Pick<CommDecision, 'strategy' | 'localSgdPeriod'>;
  /** Its share of a step spent communicating, as figured now; null: not known. */
  currentShare: number | null;
  /** It was decided blind (no figures): any figured decision replaces it. */
  blind: boolean;
  /** decideComm at the usual budget (toward less traffic) and at DOWN_BUDGET (toward less loss). */
  up: CommDecision;
  down: CommDecision;
  /** Milliseconds since the decision in force was made. */
  sinceChangeMs: number;
  /** Steps the run has left, and a step's compute seconds. */
  stepsLeft: number;
  computeS: number;
}

export type RedecideAction = 'keep' | 'retune' | 'relaunch';

export interface Redecision {
  action: RedecideAction;
  /** The decision to train with after a retune or relaunch; null when kept. */
  next: CommDecision | null;
  /** Why, with the shares (the decision's own reason, with the link and step figures, follows it in the list). */
  why: string;
}

function pct(share: number | null): string {
  return share === null ? 'an unknown share' : `${(share * 100).toFixed(1)} %`;
}

/** Seconds per step spent communicating at `share` of a step whose compute takes `computeS`. */
function commSeconds(share: number, computeS: number): number {
  return share >= 1 ? Number.POSITIVE_INFINITY : (share * computeS) / (1 - share);
}

function sameChoice(a: Pick<CommDecision, 'strategy' | 'localSgdPeriod'>, b: Pick<CommDecision, 'strategy' | 'localSgdPeriod'>): boolean {
  return a.strategy === b.strategy && (a.strategy !== 'local-sgd' || a.localSgdPeriod === b.localSgdPeriod);
}

/** A move to `next`: a retune when only the period changes, else a relaunch — when it pays, else kept. */
function move(input: RedecideInput, next: CommDecision, why: string): Redecision {
  const { current } = input;
  if (current.strategy === 'local-sgd' && next.strategy === 'local-sgd') return { action: 'retune', next, why: `${why}; the running trainer changes its period at its next average` };
  const now = describeStrategy(current);
  if (lossiness(next) > lossiness(current)) {
    const saved = (commSeconds(input.currentShare ?? 0, input.computeS) - commSeconds(next.commShare ?? 0, input.computeS)) * input.stepsLeft;
    if (saved >= RELAUNCH_COST_S) return { action: 'relaunch', next, why: `${why}; relaunching from the checkpoint saves about ${saved.toFixed(0)} s over the ${input.stepsLeft} steps left` };
    return { action: 'keep', next: null, why: `${now} kept: ${describeStrategy(next)} would save about ${saved.toFixed(1)} s over the ${input.stepsLeft} steps left, less than a relaunch costs (about ${RELAUNCH_COST_S} s)` };
  }
  const leftS = input.stepsLeft * input.computeS;
  if (input.blind || leftS >= RETURN_MIN_LEFT_S) return { action: 'relaunch', next, why: `${why}; relaunching from the checkpoint with about ${leftS.toFixed(0)} s of training left` };
  return { action: 'keep', next: null, why: `${now} kept: ${describeStrategy(next)} would fit, but about ${leftS.toFixed(0)} s of training is left, under the ${RETURN_MIN_LEFT_S} s a relaunch back is worth` };
}

/** Keep, retune or relaunch, and why (see the file's comment for the rule). */
export function redecide(input: RedecideInput): Redecision {
  const { current, up, down } = input;
  const now = describeStrategy(current);
  if (input.blind) {
    if (up.commShare === null || sameChoice(current, up)) return { action: 'keep', next: null, why: `${now} kept` };
    return move(input, up, `decided blind; the figures call for ${describeStrategy(up)}`);
  }
  if (input.sinceChangeMs < MIN_DWELL_MS) return { action: 'keep', next: null, why: `${now} kept: decided ${Math.round(input.sinceChangeMs / 1000)} s ago, under the ${MIN_DWELL_MS / 1000} s a decision stands` };
  const share = input.currentShare;
  if (share !== null && share > UP_SHARE && up.commShare !== null && lossiness(up) > lossiness(current)) {
    return move(input, up, `${now} spends ${pct(share)} of a step communicating, over ${pct(UP_SHARE)}: ${describeStrategy(up)}`);
  }
  if (down.commShare !== null && lossiness(down) < lossiness(current)) {
    return move(input, down, `${describeStrategy(down)} fits ${pct(DOWN_BUDGET)} of a step now (${pct(down.commShare)})`);
  }
  return { action: 'keep', next: null, why: `${now} kept: it spends ${pct(share)} of a step communicating, inside the ${pct(DOWN_BUDGET)}–${pct(UP_SHARE)} band` };
}
