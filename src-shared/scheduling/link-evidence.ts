/**
 * When a training run's links must be measured again, and what its own traffic says about them (issue 24, item 1).
 * A link measured when machines joined goes stale while a run trains over it: Wi-Fi slows when a laptop moves, a
 * cable is shared. So a ring link is measured again when (a) the trainer's measured communication (`comm_s`)
 * disagrees with what the ring model predicts for it by more than EVIDENCE_FACTOR, (b) its measurement is older
 * than TRAINING_LINK_MAX_AGE_MS, or (c) a member's heartbeats slow. And the training's own figures count as
 * measurements: bytes and seconds of an all-reduce (or a local-SGD average) give the rate the ring saw, a lower
 * bound on the link's own (the seconds include gloo's CPU work and waiting). Pure: the coordinator applies it
 * (generation-comm.ts) and a table tests it (test/unit/scheduling/link-evidence.test.ts).
 */
import { formatMbps, type LinkMeasurement } from '../links/link-matrix';
import { modelledSecondsPerStep } from './comm-choice';
import type { CommStrategy } from './comm-types';

/**
 * Measured ÷ modelled beyond which the link is measured again. The model was within ×1.15 of what trainers
 * measured over shaped links (bench/slow-link, 100 and 20 Mbit/s) and comm-choice bounds a ratio at ×0.5..×4 as
 * timing noise; a changed link moves it far more (5.4 Gbit/s to 20 Mbit/s is ×270, 100 to 20 is ×5). Two is past
 * the model's known error, and well inside what a change worth re-deciding for does.
 */
export const EVIDENCE_FACTOR = 2;
/** A disagreement smaller than this share of a step's compute cannot change a decision: not worth a probe. */
export const EVIDENCE_MIN_SHARE_OF_STEP = 0.02;
/**
 * A ring link of a training run older than this is probed again. A probe sends at most 4 MB or 1.5 s
 * (link-survey DEFAULT_PROBE), one pair at a time: once a minute that is at most 2.5 % of a link's time per
 * direction, while a slowed link is noticed within a minute even by a trainer that reports no comm_s.
 */
export const TRAINING_LINK_MAX_AGE_MS = 60_000;
/** The same pair is not probed on evidence more often than this (the probe itself takes up to ~2 s on a slow link). */
export const EVIDENCE_PROBE_MIN_INTERVAL_MS = 15_000;
/** A member whose heartbeats arrive this many intervals apart has a slowed or congested link: its links are probed. */
export const HEARTBEAT_SLOW_FACTOR = 3;

/** One communication round a trainer timed, over the ring it trained on. */
export interface TrainingRound {
  strategy: CommStrategy;
  /** Seconds of one round (`comm_s`): a step's communication, or one local-SGD average. */
  seconds: number;
  gradBytes: number;
  powersgdBytes: number | null;
  /** Ring members. */
  n: number;
  /** A step's compute seconds (what a disagreement is weighed against). */
  computeS: number;
}

/** Bytes one round all-reduces and in how many all-reduces (PowerSGD: P, then Q). */
function roundBytes(r: Pick<TrainingRound, 'strategy' | 'gradBytes' | 'powersgdBytes'>): { bytes: number; rounds: number } {
  switch (r.strategy) {
    case 'fp16':
      return { bytes: r.gradBytes / 2, rounds: 1 };
    case 'powersgd':
      return { bytes: r.powersgdBytes ?? r.gradBytes / 32, rounds: 2 };
    default:
      return { bytes: r.gradBytes, rounds: 1 }; // ddp's gradients, or local-sgd's parameters (as many bytes)
  }
}

/**
 * The rate (Mbit/s) the ring's slowest hop moved a round at, by the ring model inverted: 2(n-1)/n of the bytes in
 * the seconds left after 2(n-1) round trips per all-reduce. Null when the round is latency-bound (nothing left
 * for the wire) or the figures are not usable.
 */
export function impliedMbps(r: Pick<TrainingRound, 'strategy' | 'seconds' | 'gradBytes' | 'powersgdBytes' | 'n'>, rttMs: number | null): number | null {
  if (r.n < 2 || !(Number.isFinite(r.seconds) && r.seconds > 0) || !(r.gradBytes > 0)) return null;
  const { bytes, rounds } = roundBytes(r);
  const wire = r.seconds - rounds * 2 * (r.n - 1) * ((rttMs ?? 0) / 1000);
  if (!(wire > 0)) return null;
  return (((2 * (r.n - 1)) / r.n) * bytes * 8) / (wire * 1e6);
}

/** What one training round says about the ring's slowest link. */
export interface Evidence {
  /** Why the link must be probed now; null when the figure agrees with it. */
  remeasure: string | null;
  /** The rate the training moved its bytes at, to record as a 'training' measurement; null: nothing to record. */
  trainingMbps: number | null;
}

function secs(s: number): string {
  return s >= 0.01 ? `${s.toFixed(2)} s` : `${(s * 1000).toFixed(1)} ms`;
}

/**
 * Weighs a trainer's round against the link it trained over. Slower than the model by over EVIDENCE_FACTOR (and
 * by enough to matter): probe, since only a probe tells a slowed link from CPU or waiting. Faster than the link
 * allows by that factor: the link is faster than the map says (a lower bound is certain) — record it and probe.
 * Otherwise the figure agrees: recorded as a fresh training measurement, no probe.
 */
export function weighEvidence(round: TrainingRound, link: Pick<LinkMeasurement, 'from' | 'to' | 'mbps' | 'rttMs'>): Evidence {
  if (link.mbps === null || !(link.mbps > 0) || round.n < 2) return { remeasure: null, trainingMbps: null };
  const rtt = link.rttMs ?? 0;
  const modelled = modelledSecondsPerStep({ gradBytes: round.gradBytes, powersgdBytes: round.powersgdBytes, n: round.n }, round.strategy, 1, link.mbps, rtt);
  const implied = impliedMbps(round, link.rttMs);
  const name = `the ${formatMbps(link.mbps)} ${link.from}–${link.to} link`;
  const what = `the trainer's ${round.strategy === 'local-sgd' ? 'model average' : `${round.strategy} step`} took ${secs(round.seconds)} communicating`;
  if (round.seconds > modelled * EVIDENCE_FACTOR && round.seconds - modelled >= EVIDENCE_MIN_SHARE_OF_STEP * round.computeS) {
    return { remeasure: `${what}, ×${(round.seconds / modelled).toFixed(1)} the ${secs(modelled)} the model gives ${name}`, trainingMbps: null };
  }
  if (implied !== null && implied > link.mbps * EVIDENCE_FACTOR) {
    return { remeasure: `${what}: at least ${formatMbps(implied)}, faster than ${name}`, trainingMbps: implied };
  }
  return { remeasure: null, trainingMbps: implied };
}

/** Why a ring link must be probed for its age (or its ends' heartbeats), or null. */
export function staleWhy(link: Pick<LinkMeasurement, 'from' | 'to' | 'measuredAt'> | null, now: number, slowHeartbeats: readonly string[] = [], maxAgeMs = TRAINING_LINK_MAX_AGE_MS): string | null {
  if (!link) return 'not measured yet';
  if (slowHeartbeats.length > 0) return `heartbeats from ${slowHeartbeats.join(', ')} arrive over ${HEARTBEAT_SLOW_FACTOR} intervals apart`;
  const age = now - link.measuredAt;
  return age > maxAgeMs ? `measured ${Math.round(age / 1000)} s ago (over ${Math.round(maxAgeMs / 1000)} s while training)` : null;
}
