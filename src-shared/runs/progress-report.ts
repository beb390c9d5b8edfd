/**
 * The `progress` report: the trainer's progress lines, parsed on the agent where they are printed and sent in
 * batches, so the coordinator no longer re-reads every output chunk to find them (issue 16, item 6). Kept out
 * of worker-protocol.ts, which only lists it in its union. Every number is bounded: a hostile or confused agent
 * gets a 400 naming the field, never a curve of NaNs or a million points in one entry.
 *
 * Fields mirror TrainerProgressLine (src-main/platform/runs/progress-line.ts); a null field is left out on the
 * wire to keep batches small.
 */
import { z } from 'zod';
import { COMM_STRATEGIES } from '../scheduling/comm-types';

/** Most points in one progress report (the agent starts another entry past it). */
export const MAX_PROGRESS_POINTS = 1000;
/** Longest run id (worker-protocol.ts FIELD_CAPS.id; not imported, that module imports this one). */
const RUN_ID_CHARS = 200;

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const nonNegative = z.number().nonnegative().finite();

export const progressPointSchema = z.object({
  step: count,
  rank: count.max(1_000_000).nullable().optional(),
  totalSteps: count.nullable().optional(),
  loss: z.number().finite().nullable().optional(),
  samplesPerSec: nonNegative.nullable().optional(),
  worldSize: count.min(1).max(1_000_000).nullable().optional(),
  shard: z.tuple([count, count]).nullable().optional(),
  resumedFrom: count.nullable().optional(),
  gradBytes: count.nullable().optional(),
  stepComputeS: nonNegative.nullable().optional(),
  comm: z.enum(COMM_STRATEGIES).nullable().optional(),
});
export type ProgressPoint = z.infer<typeof progressPointSchema>;

export const progressReportSchema = z.object({
  type: z.literal('progress'),
  runId: z.string().max(RUN_ID_CHARS),
  generation: z.number().int().nonnegative(),
  points: z.array(progressPointSchema).min(1).max(MAX_PROGRESS_POINTS),
});
export type ProgressReport = z.infer<typeof progressReportSchema>;
