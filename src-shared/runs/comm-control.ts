/**
 * Changing a running trainer's local-SGD period without a relaunch (issue 24, item 2): the coordinator tells each
 * member's agent (`comm-update`), the agent writes the run's comm control file, and the trainer reads it at its
 * next model average (gpu_share_comm.py). Every rank must change at the same step, or their averages would stop
 * matching and the collectives hang: so the ranks agree in one tiny all-reduce before each average (the highest
 * `seq` any rank has read wins), and the new period counts from that average on. docs/api.md "Changing the
 * period while training" is the protocol for user trainers. Pure: the schema and the file's contents.
 */
import { z } from 'zod';
import { MAX_LOCAL_SGD_PERIOD } from '../scheduling/comm-types';

/** The trainer's environment variable naming the control file (absent: the agent is too old to retune). */
export const COMM_CONTROL_ENV = 'GPU_SHARE_COMM_CONTROL';
/** The control file's name, in the agent's folder for the run's generation. */
export const COMM_CONTROL_FILE = 'comm-control.json';

export const commUpdateInstructionSchema = z.object({
  kind: z.literal('comm-update'),
  runId: z.string().max(200),
  generation: z.number().int().nonnegative(),
  /** Increases with every change of this generation; a trainer applies the highest it has seen. */
  seq: z.number().int().positive().max(1_000_000),
  strategy: z.literal('local-sgd'),
  localSgdPeriod: z.number().int().min(1).max(MAX_LOCAL_SGD_PERIOD),
  /** Why, for the agent's log. */
  reason: z.string().max(2000),
});
export type CommUpdateInstruction = z.infer<typeof commUpdateInstructionSchema>;

/** The control file's JSON: what a trainer reads (snake_case, as the trainer's own progress lines are). */
export interface CommControlFile {
  generation: number;
  seq: number;
  strategy: 'local-sgd';
  local_sgd_period: number;
}

export function commControlFile(u: CommUpdateInstruction): CommControlFile {
  return { generation: u.generation, seq: u.seq, strategy: u.strategy, local_sgd_period: u.localSgdPeriod };
}
