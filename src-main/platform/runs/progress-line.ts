/**
 * Reads trainers' progress lines out of raw pty output. The stream is hostile in small ways: a pty turns
 * \n into \r\n, torchrun prefixes each rank's lines with `[default0]:`, and a chunk may end mid-line. So the
 * parser carries the unfinished tail between chunks, strips prefixes, and drops anything malformed rather
 * than throwing: a bad line from a training script must never take the agent down.
 *
 * Format (docs/api.md, "Trainer progress lines"):
 *   GPU_SHARE_PROGRESS {"step":12,"total_steps":300,"loss":0.53,"samples_per_sec":812.3,"rank":0,"world_size":2,"shard":[0,500],"resumed_from":10}
 * The first lines of each (re)start also carry "grad_bytes" (fp32 gradient bytes one DDP step all-reduces),
 * "powersgd_bytes" (what a PowerSGD step would all-reduce instead; optional),
 * "compute_s" (one step's seconds without communication) and "comm" (the strategy in force): the coordinator
 * chooses the next generation's strategy from them (comm-choice.ts). A line may also carry "comm_s", what one
 * round of communication measurably cost (a step's for ddp/fp16/powersgd, an average's for local-sgd), with
 * "comm": the decision uses it over the model (bounded: MAX_COMM_S). A local-sgd average's line also carries
 * "drift" (the members' relative distance from their average just before it) and "drift_steps" (the steps it grew
 * over): the coordinator bounds the period by it (src-shared/scheduling/drift-bound.ts). Any other finite number
 * (`lr`, `eval_loss`, `grad_norm`…) is a metric the run page charts (src-shared/runs/progress-metrics.ts).
 */
import { extractMetrics } from '../../../src-shared/runs/progress-metrics';
import { COMM_STRATEGIES, type CommStrategy } from '../../../src-shared/scheduling/comm-types';

export const PROGRESS_MARKER = 'GPU_SHARE_PROGRESS';

/** Longest unfinished line kept between chunks; beyond it the tail cannot be a progress line worth waiting for. */
export const MAX_CARRY_CHARS = 64 * 1024;
/** Largest `comm_s` taken (an hour per round); beyond it the figure is a broken clock, not a measurement. */
export const MAX_COMM_S = 3600;

export interface TrainerProgressLine {
  step: number;
  /** Steps the whole run will take, when the trainer says (`total_steps`). */
  totalSteps: number | null;
  loss: number | null;
  samplesPerSec: number | null;
  rank: number | null;
  worldSize: number | null;
  shard: [number, number] | null;
  resumedFrom: number | null;
  /** fp32 gradient bytes one DDP step all-reduces (`grad_bytes`), from the first lines of a (re)start. */
  gradBytes: number | null;
  /** What one PowerSGD step would all-reduce instead (`powersgd_bytes`, by torch's rule); null: not said. */
  powersgdBytes?: number | null;
  /** Seconds of one step without communication (`compute_s`). */
  stepComputeS: number | null;
  /** The communication strategy the trainer runs with (`comm`). */
  comm: CommStrategy | null;
  /** Measured seconds of one communication round of `comm` (`comm_s`); null: not said on this line. */
  commS?: number | null;
  /** local-sgd: ||θ_local − θ_avg|| / ||θ_avg|| at an average, the largest over ranks (`drift`); null: not said. */
  drift?: number | null;
  /** The steps that drift grew over (`drift_steps`: the period then in force). */
  driftSteps?: number | null;
  /** The line's other finite numbers (`lr`, `eval_loss`…: progress-metrics.ts); null: none. */
  metrics?: Record<string, number> | null;
}

export interface ParsedChunk {
  progress: TrainerProgressLine[];
  /** The unfinished last line, to pass back with the next chunk. */
  carry: string;
}

// What may stand before the marker: torchrun's `[default0]:` / `[rank1]:` style prefixes and spaces.
const PREFIX = /^(?:\s*\[[^\]\r\n]{0,64}\]:?)*\s*$/;

function finiteOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function countOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

function commOrNull(value: unknown): CommStrategy | null {
  return typeof value === 'string' && (COMM_STRATEGIES as readonly string[]).includes(value) ? (value as CommStrategy) : null;
}

/** One line (no newline) → its progress record, or null when it is not a well-formed progress line. */
export function parseProgressLine(rawLine: string): TrainerProgressLine | null {
  // Trailing \r (a pty's \r\n) go; of text overwritten with \r, what the last one left on screen stays.
  let end = rawLine.length;
  while (end > 0 && rawLine.charCodeAt(end - 1) === 13) end--;
  const cr = rawLine.lastIndexOf('\r', end - 1);
  const line = cr === -1 ? rawLine.slice(0, end) : rawLine.slice(cr + 1, end);
  const at = line.indexOf(PROGRESS_MARKER);
  if (at === -1) return null;
  if (!PREFIX.test(line.slice(0, at))) return null;
  const rest = line.slice(at + PROGRESS_MARKER.length);
  if (!/^\s/.test(rest)) return null;
  let data: unknown;
  try {
    data = JSON.parse(rest);
  } catch {
    return null;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const record = data as Record<string, unknown>;
  const step = countOrNull(record.step);
  if (step === null) return null;
  const samplesPerSec = finiteOrNull(record.samples_per_sec);
  let shard: [number, number] | null = null;
  if (Array.isArray(record.shard) && record.shard.length === 2) {
    const [start, end] = record.shard.map(countOrNull);
    if (start !== null && start !== undefined && end !== null && end !== undefined && start <= end) shard = [start, end];
  }
  const worldSize = countOrNull(record.world_size);
  const computeS = finiteOrNull(record.compute_s);
  const commS = finiteOrNull(record.comm_s);
  const drift = finiteOrNull(record.drift);
  return {
    step,
    totalSteps: countOrNull(record.total_steps),
    loss: finiteOrNull(record.loss),
    samplesPerSec: samplesPerSec !== null && samplesPerSec >= 0 ? samplesPerSec : null,
    rank: countOrNull(record.rank),
    worldSize: worldSize !== null && worldSize > 0 ? worldSize : null,
    shard,
    resumedFrom: countOrNull(record.resumed_from),
    gradBytes: countOrNull(record.grad_bytes),
    powersgdBytes: countOrNull(record.powersgd_bytes),
    stepComputeS: computeS !== null && computeS >= 0 ? computeS : null,
    comm: commOrNull(record.comm),
    commS: commS !== null && commS >= 0 && commS <= MAX_COMM_S ? commS : null,
    drift: drift !== null && drift >= 0 ? drift : null,
    driftSteps: countOrNull(record.drift_steps),
    metrics: extractMetrics(record),
  };
}

/**
 * Parses the complete lines of `carry + chunk`; returns their progress records (in order) and the
 * unfinished tail. Never throws.
 */
export function parseProgressLines(chunk: string, carry = ''): ParsedChunk {
  const text = carry + chunk;
  const lines = text.split('\n');
  let tail = lines.pop() ?? '';
  if (tail.length > MAX_CARRY_CHARS) tail = '';
  const progress: TrainerProgressLine[] = [];
  for (const line of lines) {
    if (!line.includes(PROGRESS_MARKER)) continue;
    const parsed = parseProgressLine(line);
    if (parsed) progress.push(parsed);
  }
  return { progress, carry: tail };
}
