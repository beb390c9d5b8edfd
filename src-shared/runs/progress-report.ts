/**
 * The `progress` report: the trainer's progress lines, parsed on the agent where they are printed and sent in
 * batches, so the coordinator no longer re-reads every output chunk to find them (issue 16, item 6). Kept out
 * of worker-protocol.ts, which only lists it in its union. Every number is bounded: a hostile or confused agent
 * gets a 400 naming the point and the field, never a curve of NaNs or a million points in one entry.
 *
 * Points are checked by one plain loop rather than a zod object per point: at hundreds of lines a second a zod
 * object with eleven optional fields cost the coordinator more per line (~2-13 µs) than re-reading the line
 * from the output did, which would have defeated the point of sending them parsed.
 *
 * Fields mirror TrainerProgressLine (src-main/platform/runs/progress-line.ts); a null field is left out on the
 * wire to keep batches small (null is accepted too).
 */
import { z } from 'zod';
import { COMM_STRATEGIES, type CommStrategy } from '../scheduling/comm-types';
import { MAX_METRIC_NAME_CHARS, MAX_RUN_METRICS, isMetricsRecord } from './progress-metrics';

/** Most points in one progress report (the agent starts another entry past it). */
export const MAX_PROGRESS_POINTS = 1000;
/** Longest run id (worker-protocol.ts FIELD_CAPS.id; not imported, that module imports this one). */
const RUN_ID_CHARS = 200;
/** Largest `comm_s` (seconds of one communication round; progress-line.ts MAX_COMM_S, not imported: platform). */
const MAX_COMM_S = 3600;
/** Largest rank or world size a point may name. */
const MAX_RANK = 1_000_000;

export interface ProgressPoint {
  step: number;
  rank?: number | null;
  totalSteps?: number | null;
  loss?: number | null;
  samplesPerSec?: number | null;
  worldSize?: number | null;
  shard?: [number, number] | null;
  resumedFrom?: number | null;
  gradBytes?: number | null;
  powersgdBytes?: number | null;
  stepComputeS?: number | null;
  comm?: CommStrategy | null;
  commS?: number | null;
  drift?: number | null;
  driftSteps?: number | null;
  /** The line's other finite numbers by name (`lr`, `eval_loss`…). */
  metrics?: Record<string, number> | null;
}

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isNonNegative = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** What each optional field must be, and the words for a person when it is not. */
const FIELDS: Readonly<Record<Exclude<keyof ProgressPoint, 'step'>, [(v: unknown) => boolean, string]>> = {
  rank: [(v) => isCount(v) && (v as number) <= MAX_RANK, `an integer 0..${MAX_RANK}`],
  totalSteps: [isCount, 'a safe integer >= 0'],
  loss: [(v) => typeof v === 'number' && Number.isFinite(v), 'a finite number'],
  samplesPerSec: [isNonNegative, 'a finite number >= 0'],
  worldSize: [(v) => isCount(v) && (v as number) >= 1 && (v as number) <= MAX_RANK, `an integer 1..${MAX_RANK}`],
  shard: [(v) => Array.isArray(v) && v.length === 2 && isCount(v[0]) && isCount(v[1]) && v[0] <= v[1], '[start, end], integers >= 0, start <= end'],
  resumedFrom: [isCount, 'a safe integer >= 0'],
  gradBytes: [isCount, 'a safe integer >= 0'],
  powersgdBytes: [isCount, 'a safe integer >= 0'],
  stepComputeS: [isNonNegative, 'a finite number >= 0'],
  commS: [(v) => isNonNegative(v) && (v as number) <= MAX_COMM_S, `a number 0..${MAX_COMM_S} (seconds)`],
  drift: [isNonNegative, 'a finite number >= 0 (a relative distance)'],
  driftSteps: [isCount, 'a safe integer >= 0'],
  metrics: [isMetricsRecord, `an object of at most ${MAX_RUN_METRICS} finite numbers named by letters, digits, _ . / - (at most ${MAX_METRIC_NAME_CHARS} characters)`],
  comm: [(v) => typeof v === 'string' && (COMM_STRATEGIES as readonly string[]).includes(v), `one of ${COMM_STRATEGIES.join(', ')}`],
};
const FIELD_NAMES = Object.keys(FIELDS) as (keyof typeof FIELDS)[];

/** The first thing wrong with one point, as [field, what it must be], or null when it is good. */
export function pointProblem(point: unknown): [string, string] | null {
  if (typeof point !== 'object' || point === null || Array.isArray(point)) return ['', 'an object with at least "step"'];
  const p = point as Record<string, unknown>;
  if (!isCount(p.step)) return ['step', 'a safe integer >= 0'];
  for (const name of FIELD_NAMES) {
    const v = p[name];
    if (v === undefined || v === null) continue;
    const [ok, must] = FIELDS[name];
    if (!ok(v)) return [name, must];
  }
  return null;
}

// Typed as points for both sides (z.custom checks nothing per element); the refinement below does the checking.
const pointsSchema = z
  .array(z.custom<ProgressPoint>(() => true))
  .min(1)
  .max(MAX_PROGRESS_POINTS)
  .superRefine((points, ctx) => {
    for (let i = 0; i < points.length; i++) {
      const problem = pointProblem(points[i]);
      if (!problem) continue;
      const [field, must] = problem;
      ctx.addIssue({ code: 'custom', path: field ? [i, field] : [i], message: `must be ${must}` });
      return; // one is enough to name what to fix
    }
  });

export const progressReportSchema = z.object({
  type: z.literal('progress'),
  runId: z.string().max(RUN_ID_CHARS),
  generation: z.number().int().nonnegative(),
  points: pointsSchema,
});
export type ProgressReport = z.infer<typeof progressReportSchema>;
