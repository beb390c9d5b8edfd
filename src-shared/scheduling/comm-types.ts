/**
 * How a run's members exchange what they learn each step. `ddp` sends every gradient every step; `fp16`
 * halves the bytes (torch's fp16 compression hook); `powersgd` compresses by low-rank approximation with error
 * feedback (torch's PowerSGD hook; on gloo only with torch 2 or newer on every member — torch 1.x's gloo aborts on it); `local-sgd` trains alone for
 * `localSgdPeriod` steps and then averages the models (torch's PeriodicModelAverager). `auto` lets the
 * coordinator choose per generation from the measured links and what the trainer reported (comm-choice.ts).
 */

export const COMM_STRATEGIES = ['ddp', 'fp16', 'powersgd', 'local-sgd'] as const;
export type CommStrategy = (typeof COMM_STRATEGIES)[number];
export const COMM_SETTINGS = ['auto', ...COMM_STRATEGIES] as const;
export type CommSetting = (typeof COMM_SETTINGS)[number];

/** Longest local-SGD period anyone may ask for (and the most `auto` picks). */
export const MAX_LOCAL_SGD_PERIOD = 1000;

/** What a trainer reports about one step in its first progress lines (`grad_bytes`, `compute_s`). */
export interface TrainerCommStats {
  /** Bytes of gradients one step all-reduces in plain DDP (fp32). */
  gradBytes: number;
  /** What one PowerSGD step all-reduces instead, when the trainer said (`powersgd_bytes`); else estimated. */
  powersgdBytes?: number;
  /** Seconds one step takes without communication (forward, backward, optimizer). */
  stepComputeS: number;
  /** What communication actually cost the trainer (its `comm_s`), over the link it was measured on; else modelled. */
  measured?: MeasuredComm;
}

/**
 * One communication round as the trainer timed it (`comm_s`): for ddp, fp16 and powersgd a step's time minus its
 * compute; for local-sgd one model average. The coordinator ties it to the ring's slowest link when it arrived,
 * so the ratio to the model (what the model misses: protocol, CPU, waiting) carries over to other links.
 */
export interface MeasuredComm {
  strategy: CommStrategy;
  /** Seconds of one round: per step (ddp, fp16, powersgd) or per average (local-sgd). */
  seconds: number;
  /** The slowest ring link's rate and RTT when it was measured. */
  mbps: number;
  rttMs: number | null;
}

/** The strategy a generation trains with, and why, for the run view, the output and `runs show`. */
export interface CommDecision {
  /** What the run asked for. */
  requested: CommSetting;
  strategy: CommStrategy;
  /** Steps between model averages (local-sgd only). */
  localSgdPeriod: number | null;
  /** One sentence: the rule that picked it, with the numbers (link, bytes, step time). */
  reason: string;
  /** Estimated share of a step spent communicating with this strategy (0..1), when the numbers were known. */
  commShare: number | null;
  /** The generation it was decided for. */
  generation: number;
}

/** How a decision took effect: a generation's launch, a period changed in the running trainer, a relaunch, or kept. */
export type CommChangeHow = 'launch' | 'retune' | 'relaunch' | 'kept';

/** One entry of a run's decision list (`runs show`, the run page): what auto decided, when, how, why, with the figures. */
export interface CommChange {
  /** Epoch ms. */
  at: number;
  generation: number;
  strategy: CommStrategy;
  localSgdPeriod: number | null;
  how: CommChangeHow;
  /** The rule and its figures, one sentence or two. */
  reason: string;
  commShare: number | null;
}

/** Entries a run keeps at most (oldest out): a flapping link cannot grow it without end. */
export const MAX_COMM_CHANGES = 50;
