/**
 * Which communication strategy a generation trains with (issue 16). Training across people's machines runs at
 * the speed of the slowest link on the ring: a 20 Mbit/s hop turns plain DDP of a 12 MB model into seconds of
 * waiting per step. So for `auto` the coordinator picks, each generation, the least lossy strategy whose
 * communication stays within 10 % of a step on the ring's slowest link — ddp, then fp16 (NCCL only) and powersgd
 * (NCCL, or gloo when every member runs torch 2 or newer), then local-sgd with the shortest period that fits — from what the trainer reported about its step and
 * what the agents measured of their links. Pure, so every branch and boundary is tested on its own.
 */
import { formatMbps, type LinkMeasurement } from '../links/link-matrix';
import { MAX_LOCAL_SGD_PERIOD, type CommDecision, type CommSetting, type CommStrategy, type MeasuredComm, type TrainerCommStats } from './comm-types';

/** The most of a step `auto` lets communication take (share of step time spent communicating). */
export const COMM_SHARE_BUDGET = 0.1;

/**
 * PowerSGD's bytes relative to plain DDP when the trainer did not report `powersgd_bytes` (gpu_share_comm.py
 * computes them with torch's own rule): an ESTIMATE, not a measurement. Rank 1–4 on MLP-shaped layers
 * (a few hundred wide or more) sends P and Q matrices of tens to thousands of times fewer elements; biases and
 * other 1-D tensors go uncompressed. 1/32 is a deliberately cautious figure for such models.
 */
export const POWERSGD_BYTES_RATIO = 1 / 32;

/**
 * Bounds on measured ÷ modelled communication. The model was ~15 % low in bench/slow-link (protocol and gloo's CPU
 * work); a ratio far outside these is a timing artefact (a ddp step minus its compute on a fast link is mostly
 * noise), not a property of the link, and must not swing the choice by itself.
 */
export const MIN_MEASURED_RATIO = 0.5;
export const MAX_MEASURED_RATIO = 4;
/**
 * A measured cost is used over links of its own class only: rates within this factor of the link it was measured
 * on. Over a shaped link the model was low by the same ×1.15 at 100 and at 20 Mbit/s (bandwidth-bound), but on a
 * fast link a step's fixed costs (and the noise of step time minus compute) dominate and do not scale with it.
 */
export const LINK_CLASS_FACTOR = 2;

/** Period for an explicit `local-sgd` without localSgdPeriod while nothing is measured yet. */
export const DEFAULT_LOCAL_SGD_PERIOD = 8;

export type CommBackend = 'nccl' | 'gloo';

export interface CommChoiceInput {
  requested: CommSetting;
  /** The run's localSgdPeriod, when it gave one (only meaningful with requested 'local-sgd'). */
  localSgdPeriod?: number | null;
  /** What the trainer reported about one step; null until it has. */
  stats: TrainerCommStats | null;
  /** The slowest link on the run's ring; null when a ring link is not measured yet. */
  slowest: LinkMeasurement | null;
  /** Members (nodes) of the generation. */
  members: number;
  /** 'nccl' for a GPU run, 'gloo' for a CPU run. */
  backend: CommBackend;
  /** Each member's torch as its join said (gloo runs PowerSGD only when all are 2 or newer); absent: not known. */
  memberTorch?: readonly MemberTorch[];
  generation: number;
  /** The most of a step communication may take; COMM_SHARE_BUDGET unless the re-decision rule asks (comm-redecide.ts). */
  budget?: number;
}

/** A member's node and torch version (worker-protocol `python.torchVersion`; null: no torch found). */
export interface MemberTorch {
  node: string;
  torchVersion: string | null;
}

/** torch's major version from "2.11.0+cu130" or "1.13.1"; null when the text does not start with one. */
export function torchMajorVersion(version: string): number | null {
  const m = /^\s*(\d+)\./.exec(version);
  return m ? Number(m[1]) : null;
}

/**
 * Why PowerSGD cannot run on a gloo ring of these members, or null when it can. torch 1.x's gloo aborts the process
 * on the PowerSGD hook (gloo::EnforceNotMet, reproduced on torch 1.13); torch 2 trains it on gloo, CPU and CUDA
 * tensors alike (bench/powersgd-ranks.py on a device, torch 2.11). The first member older than 2, or whose version
 * is not known, is named.
 */
export function glooPowersgdProblem(members: readonly MemberTorch[] | undefined): string | null {
  if (!members || members.length === 0) return "the members' torch versions are not known, and torch 1.x's gloo aborts on it";
  for (const m of members) {
    const major = m.torchVersion === null ? null : torchMajorVersion(m.torchVersion);
    if (major === null) return `${m.node}'s torch version is not known (${m.torchVersion === null ? 'no torch found' : `"${m.torchVersion.slice(0, 40)}"`}), and torch 1.x's gloo aborts on it`;
    if (major < 2) return `${m.node} runs torch ${m.torchVersion!.slice(0, 40)}, whose gloo aborts on it (torch 2 or newer trains it on gloo)`;
  }
  return null;
}

interface Known {
  gradBytes: number;
  /** What a PowerSGD step sends, as the trainer reported it (torch's rule on its layers); null: estimated. */
  powersgdBytes: number | null;
  computeS: number;
  link: LinkMeasurement & { mbps: number };
  n: number;
  /** Measured ÷ modelled communication (1 when nothing was measured), and what it came from. */
  ratio: number;
  measured: (MeasuredComm & { modelledS: number }) | null;
  /** A measured cost left out: taken over a link of another class. */
  unused: MeasuredComm | null;
}

/**
 * Seconds one all-reduce of `bytes` takes on a ring of n over `link`: a ring moves 2(n-1)/n of the bytes over
 * every hop (so over the slowest one), plus 2(n-1) message latencies of about one RTT each.
 */
export function ringAllReduceSeconds(bytes: number, n: number, mbps: number, rttMs: number): number {
  if (n <= 1) return 0;
  const wire = ((2 * (n - 1)) / n) * bytes * 8 / (mbps * 1e6);
  return wire + 2 * (n - 1) * (rttMs / 1000);
}

/** Communication seconds per step of one strategy (local-sgd: its one average spread over `period` steps). */
function commSecondsPerStep(k: Known, strategy: CommStrategy, period: number): number {
  return k.ratio * modelledSecondsPerStep(k, strategy, period, k.link.mbps, k.link.rttMs ?? 0);
}

/** What the ring model alone says one strategy's communication costs per step over a link of `mbps` / `rttMs`. */
export function modelledSecondsPerStep(k: Pick<Known, 'gradBytes' | 'powersgdBytes' | 'n'>, strategy: CommStrategy, period: number, mbps: number, rtt: number): number {
  const at = (bytes: number, rounds = 1) => rounds * ringAllReduceSeconds(bytes / rounds, k.n, mbps, rtt);
  switch (strategy) {
    case 'ddp':
      return at(k.gradBytes);
    case 'fp16':
      return at(k.gradBytes / 2);
    case 'powersgd':
      // Two all-reduces (P, then Q) per step: twice the latency.
      return at(k.powersgdBytes ?? k.gradBytes * POWERSGD_BYTES_RATIO, 2);
    case 'local-sgd':
      // Parameters (as many bytes as the gradients) once every `period` steps.
      return at(k.gradBytes) / Math.max(1, period);
  }
}

function shareOf(k: Known, strategy: CommStrategy, period: number): number {
  const c = commSecondsPerStep(k, strategy, period);
  return c / (k.computeS + c);
}

/** The shortest local-SGD period whose share fits the budget, or null when even MAX_LOCAL_SGD_PERIOD does not. */
function shortestFittingPeriod(k: Known, budget = COMM_SHARE_BUDGET): number | null {
  const c = commSecondsPerStep(k, 'local-sgd', 1);
  // share(H) = (c/H) / (compute + c/H) <= B  <=>  H >= c (1 - B) / (B compute)
  let h = Math.max(2, Math.ceil((c * (1 - budget)) / (budget * k.computeS)));
  while (h > 2 && shareOf(k, 'local-sgd', h - 1) <= budget) h -= 1; // floating point: the smallest one
  while (h <= MAX_LOCAL_SGD_PERIOD && shareOf(k, 'local-sgd', h) > budget) h += 1;
  return h <= MAX_LOCAL_SGD_PERIOD ? h : null;
}

function pct(share: number): string {
  const p = share * 100;
  return p < 1 ? `${p.toFixed(1)} %` : `${Math.round(p)} %`;
}

function byteSize(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${Math.round(bytes)} B`;
}

function seconds(s: number): string {
  return s >= 0.01 ? `${s.toFixed(2)} s` : `${(s * 1000).toFixed(2)} ms`;
}

function linkName(l: LinkMeasurement): string {
  return `${l.from}–${l.to}`;
}

/**
 * "the 19.6 Mbit/s alpha–beta link (RTT 1.2 ms), 12.6 MB of gradients and a 0.20 s step, communication modelled"
 * or "…, measured 0.21 s per average (modelled 0.17 s: ×1.23 applied to every strategy)".
 */
function numbers(k: Known): string {
  const rtt = k.link.rttMs === null ? '' : ` (RTT ${k.link.rttMs.toFixed(1)} ms)`;
  const m = k.measured;
  const cost = k.unused
    ? `communication modelled (its measured cost was over a ${formatMbps(k.unused.mbps)} link, another class)`
    : m
    ? `measured ${seconds(m.seconds)} per ${m.strategy === 'local-sgd' ? 'average' : `${m.strategy} step`} (modelled ${seconds(m.modelledS)}: ×${k.ratio.toFixed(2)} applied to every strategy${m.seconds / m.modelledS !== k.ratio ? ', bounded' : ''})`
    : 'communication modelled';
  return `the ${formatMbps(k.link.mbps)} ${linkName(k.link)} link${rtt}, ${byteSize(k.gradBytes)} of gradients and a ${seconds(k.computeS)} step, ${cost}`;
}

/** Measured ÷ modelled for a trainer's `comm_s` over the link it was taken on; null when it cannot be used. */
function measuredRatio(k: Pick<Known, 'gradBytes' | 'powersgdBytes' | 'n'>, m: MeasuredComm | undefined): (MeasuredComm & { modelledS: number; ratio: number }) | null {
  if (!m || !(Number.isFinite(m.seconds) && m.seconds >= 0 && Number.isFinite(m.mbps) && m.mbps > 0)) return null;
  const rtt = m.rttMs !== null && Number.isFinite(m.rttMs) && m.rttMs >= 0 ? m.rttMs : 0;
  // One round: a step's communication, or one local-sgd average (period 1).
  const modelledS = modelledSecondsPerStep(k, m.strategy, 1, m.mbps, rtt);
  if (!(modelledS > 0)) return null;
  const ratio = Math.min(MAX_MEASURED_RATIO, Math.max(MIN_MEASURED_RATIO, m.seconds / modelledS));
  return { ...m, modelledS, ratio };
}

function known(input: CommChoiceInput): Known | null {
  const { stats, slowest } = input;
  if (!stats || !slowest || slowest.mbps === null) return null;
  if (!(Number.isFinite(stats.gradBytes) && stats.gradBytes > 0 && Number.isFinite(stats.stepComputeS) && stats.stepComputeS > 0)) return null;
  if (!(Number.isFinite(slowest.mbps) && slowest.mbps > 0)) return null;
  const rttMs = slowest.rttMs !== null && Number.isFinite(slowest.rttMs) && slowest.rttMs >= 0 ? slowest.rttMs : null;
  const psgd = stats.powersgdBytes;
  const powersgdBytes = psgd !== undefined && Number.isFinite(psgd) && psgd > 0 ? Math.min(psgd, stats.gradBytes) : null;
  const base = { gradBytes: stats.gradBytes, powersgdBytes, n: input.members };
  const taken = stats.measured;
  const sameClass = taken !== undefined && taken.mbps <= slowest.mbps * LINK_CLASS_FACTOR && taken.mbps * LINK_CLASS_FACTOR >= slowest.mbps;
  const m = sameClass ? measuredRatio(base, taken) : null;
  const measured = m ? { strategy: m.strategy, seconds: m.seconds, mbps: m.mbps, rttMs: m.rttMs, modelledS: m.modelledS } : null;
  const unused = taken !== undefined && !sameClass && Number.isFinite(taken.mbps) && taken.mbps > 0 ? taken : null;
  return { ...base, computeS: stats.stepComputeS, link: { ...slowest, mbps: slowest.mbps, rttMs }, ratio: m?.ratio ?? 1, measured, unused };
}

function unknownWhy(input: CommChoiceInput): string {
  if (!input.stats) return 'no measurements yet: plain DDP until the trainer reports its step';
  return 'no measurements yet: plain DDP until every link on the ring is measured';
}

/** The strategy for one generation, and one sentence saying why with the numbers that decided it. */
export function decideComm(input: CommChoiceInput): CommDecision {
  const { requested, generation } = input;
  const decision = (strategy: CommStrategy, reason: string, commShare: number | null, localSgdPeriod: number | null = null): CommDecision => ({
    requested,
    strategy,
    localSgdPeriod: strategy === 'local-sgd' ? localSgdPeriod : null,
    reason,
    commShare,
    generation,
  });
  if (input.members <= 1) return decision('ddp', 'one member: nothing to send', 0);
  const k = known(input);
  // Decided once: whether this ring can run PowerSGD at all (NCCL always; gloo with torch 2 on every member).
  const psgdProblem = input.backend === 'gloo' ? glooPowersgdProblem(input.memberTorch) : null;

  if (requested !== 'auto') {
    if (requested === 'powersgd' && psgdProblem !== null) {
      // The trainer would fall back too (gpu_share_comm.wrap under torch < 2); saying so here names the member.
      return decision('fp16', `powersgd cannot run on gloo here: ${psgdProblem}; fp16 instead`, k ? shareOf(k, 'fp16', 1) : null);
    }
    if (requested === 'local-sgd') {
      const period = input.localSgdPeriod ?? (k ? shortestFittingPeriod(k) ?? MAX_LOCAL_SGD_PERIOD : DEFAULT_LOCAL_SGD_PERIOD);
      const how = input.localSgdPeriod ? 'its period asked for' : k ? 'the shortest period within 10 % of a step' : `${DEFAULT_LOCAL_SGD_PERIOD} steps until measured`;
      return decision('local-sgd', `asked for (${how})`, k ? shareOf(k, 'local-sgd', period) : null, period);
    }
    return decision(requested, 'asked for', k ? shareOf(k, requested, 1) : null);
  }

  if (!k) return decision('ddp', unknownWhy(input), null);
  const limit = input.budget ?? COMM_SHARE_BUDGET;
  const budget = pct(limit);
  const ddp = shareOf(k, 'ddp', 1);
  if (ddp <= limit) return decision('ddp', `plain DDP spends ${pct(ddp)} of a step communicating over ${numbers(k)}, within ${budget}`, ddp);
  const tried = [`DDP would spend ${pct(ddp)}`];
  if (input.backend === 'nccl') {
    const fp16 = shareOf(k, 'fp16', 1);
    if (fp16 <= limit) return decision('fp16', `${tried.join(', ')} of a step communicating over ${numbers(k)}; fp16 halves it to ${pct(fp16)}`, fp16);
    tried.push(`fp16 ${pct(fp16)}`);
  }
  if (psgdProblem === null) {
    const psgd = shareOf(k, 'powersgd', 1);
    const fraction = k.powersgdBytes === null ? `estimated at 1/${Math.round(1 / POWERSGD_BYTES_RATIO)}` : `the trainer's figure, 1/${Math.round(k.gradBytes / k.powersgdBytes)}`;
    if (psgd <= limit) {
      return decision('powersgd', `${tried.join(', ')} of a step communicating over ${numbers(k)}; powersgd (${fraction} of the bytes) ${pct(psgd)}`, psgd);
    }
    tried.push(`powersgd ${pct(psgd)} (${fraction} of the bytes)`);
  }
  // On gloo (CPU) fp16 is not tried: gloo sums half precision on the CPU, and in bench/slow-link that cost more
  // than the halved bytes saved wherever fp16 would have been chosen (300 vs 195 ms a step at 100 Mbit/s).
  const noPsgd = psgdProblem === null ? '' : `; powersgd is not tried: ${psgdProblem}`;
  const gloo = input.backend === 'gloo' ? ` (fp16 is not tried on gloo: its CPU half-precision sum costs more than it saves${noPsgd})` : '';
  const period = shortestFittingPeriod(k, limit);
  if (period !== null) {
    const share = shareOf(k, 'local-sgd', period);
    return decision('local-sgd', `${tried.join(', ')} of a step communicating over ${numbers(k)}; averaging every ${period} steps spends ${pct(share)}${gloo}`, share, period);
  }
  const share = shareOf(k, 'local-sgd', MAX_LOCAL_SGD_PERIOD);
  return decision(
    'local-sgd',
    `${tried.join(', ')} of a step communicating over ${numbers(k)}; even averaging every ${MAX_LOCAL_SGD_PERIOD} steps (the most allowed) spends ${pct(share)}${gloo}`,
    share,
    MAX_LOCAL_SGD_PERIOD,
  );
}

/** "local-sgd every 8 steps", "fp16" — for output lines and the run view. */
export function describeStrategy(d: Pick<CommDecision, 'strategy' | 'localSgdPeriod'>): string {
  return d.strategy === 'local-sgd' && d.localSgdPeriod !== null ? `local-sgd every ${d.localSgdPeriod} steps` : d.strategy;
}

/**
 * What is wrong with a run's comm fields, for POST /v1/runs (runSpecSchema), the CLI and the run form; null when
 * nothing. powersgd on a CPU run is accepted: whether its members' torch can run it on gloo is known per
 * generation, and decideComm falls back to fp16 naming the member when one cannot.
 */
export function commSpecProblem(spec: { comm?: CommSetting; localSgdPeriod?: number; useGpus?: boolean }): { path: 'comm' | 'localSgdPeriod'; message: string } | null {
  if (spec.localSgdPeriod !== undefined && spec.comm !== 'local-sgd') {
    return { path: 'localSgdPeriod', message: `localSgdPeriod applies to comm local-sgd only (this run asks for comm ${spec.comm ?? 'auto'}); drop it or set comm to local-sgd` };
  }
  return null;
}
