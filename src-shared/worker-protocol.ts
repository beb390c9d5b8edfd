/**
 * The coordinator's HTTP API for worker agents and operators: paths, bodies and replies, parsed with zod
 * on both ends. Human documentation with examples lives in docs/api.md; keep the two in step.
 */
import { z } from 'zod';

export const API_VERSION = 1;

export const apiPaths = {
  health: '/v1/health',
  join: '/v1/join',
  heartbeat: (workerId: number) => `/v1/workers/${workerId}/heartbeat`,
  report: (workerId: number) => `/v1/workers/${workerId}/report`,
  leave: (workerId: number) => `/v1/workers/${workerId}/leave`,
  // operator-only
  state: '/v1/state',
  runs: '/v1/runs',
  stopRun: (runId: string) => `/v1/runs/${encodeURIComponent(runId)}/stop`,
  drain: (workerId: number) => `/v1/workers/${workerId}/drain`,
} as const;

const gpuSchema = z.object({
  uuid: z.string().max(200).nullable(),
  name: z.string().max(200),
  vramTotalMb: z.number().nonnegative().nullable(),
});

/** What a worker says about itself when it joins. */
export const joinRequestSchema = z.object({
  node: z.string().min(1).max(128),
  agentVersion: z.string().max(64),
  gpus: z.array(gpuSchema).max(64),
  cpuCores: z.number().int().nonnegative().max(100_000),
  ramMb: z.number().nonnegative(),
  /** Host other workers can reach this one at (for the rendezvous store when it is rank 0). */
  advertiseHost: z.string().min(1).max(255),
  /** A TCP port free on this worker, for hosting the rendezvous store. */
  rdzvPort: z.number().int().min(1).max(65535),
  /** Python interpreter found on the worker, with torch's version; null if none has torch. */
  python: z.object({ path: z.string(), torchVersion: z.string() }).nullable(),
  /** True when the agent runs inside the desktop app. */
  local: z.boolean().default(false),
});
export type JoinRequest = z.input<typeof joinRequestSchema>;

export const joinResponseSchema = z.object({
  workerId: z.number().int().nonnegative(),
  incarnation: z.number().int().positive(),
  heartbeatIntervalMs: z.number().int().positive(),
  heartbeatTimeoutMs: z.number().int().positive(),
});
export type JoinResponse = z.infer<typeof joinResponseSchema>;

/** Progress a trainer printed, as the agent last parsed it. */
export const progressSchema = z.object({
  runId: z.string(),
  generation: z.number().int().nonnegative(),
  step: z.number().int().nonnegative(),
  loss: z.number().nullable(),
  samplesPerSec: z.number().nonnegative().nullable(),
  resumedFrom: z.number().int().nonnegative().nullable(),
});
export type Progress = z.infer<typeof progressSchema>;

export const heartbeatRequestSchema = z.object({
  incarnation: z.number().int().positive(),
  progress: progressSchema.nullable().default(null),
  /**
   * Sequence number of the last instruction the agent has taken (0: none yet). With it the coordinator keeps
   * handing out an instruction until it is acknowledged, so an answer lost on the way (a timeout after the
   * coordinator had answered) loses no instruction. Left out, each instruction is handed out once (older agents).
   */
  ack: z.number().int().nonnegative().optional(),
});
export type HeartbeatRequest = z.input<typeof heartbeatRequestSchema>;

/** How the agent must launch a training process for one generation of a run. */
export const launchPlanSchema = z.object({
  runId: z.string(),
  generation: z.number().int().nonnegative(),
  launcher: z.enum(['torchrun', 'direct']),
  /** Script and its arguments. */
  command: z.array(z.string()).min(1),
  /** torchrun settings; ignored by the direct launcher. */
  nnodes: z.string(),
  nprocPerNode: z.union([z.number().int().positive(), z.literal('gpu')]),
  rdzvEndpoint: z.string(),
  rdzvId: z.string(),
  maxRestarts: z.number().int().nonnegative(),
  /** GPU_SHARE_* variables (shard, world, run id, …) plus the run's own env. */
  env: z.record(z.string(), z.string()),
  useGpus: z.boolean(),
});
export type LaunchPlan = z.infer<typeof launchPlanSchema>;

export const instructionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('start'), plan: launchPlanSchema }),
  z.object({ kind: z.literal('stop'), runId: z.string(), generation: z.number().int().nonnegative(), reason: z.string() }),
  /** Finish the current step, stop training, then leave. */
  z.object({ kind: z.literal('drain'), reason: z.string() }),
]);
export type Instruction = z.infer<typeof instructionSchema>;

export const heartbeatResponseSchema = z.object({
  instructions: z.array(instructionSchema),
  /**
   * The failure timeout now in force, when it differs from the join's (a run may set its own): the agent
   * stops its training after this long without a successful heartbeat, so both sides give up together.
   */
  heartbeatTimeoutMs: z.number().int().positive().optional(),
  /** Sequence number of instructions[0]; the others follow one by one. The agent skips those at or below its ack. */
  firstSeq: z.number().int().positive().optional(),
});
export type HeartbeatResponse = z.infer<typeof heartbeatResponseSchema>;

/** Things the agent tells the coordinator as they happen. */
export const reportSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('output'), runId: z.string(), generation: z.number().int().nonnegative(), data: z.string().max(1_000_000) }),
  z.object({ type: z.literal('started'), runId: z.string(), generation: z.number().int().nonnegative(), pid: z.number().int().positive() }),
  z.object({
    type: z.literal('exited'),
    runId: z.string(),
    generation: z.number().int().nonnegative(),
    exitCode: z.number().int().nullable(),
    signal: z.number().int().nullable(),
    /** True when the agent stopped it on the coordinator's instruction. */
    requested: z.boolean(),
  }),
  z.object({
    type: z.literal('residency'),
    runId: z.string(),
    generation: z.number().int().nonnegative(),
    status: z.enum(['pass', 'fail']),
    detail: z.string().max(2000),
    pid: z.number().int().positive(),
    usedMib: z.number().nonnegative().nullable(),
  }),
]);
export type Report = z.infer<typeof reportSchema>;

export const reportRequestSchema = z.object({
  incarnation: z.number().int().positive(),
  reports: z.array(reportSchema).max(1000),
  /**
   * Number of this batch within the incarnation (1, 2, …). A batch whose answer was lost is sent again with
   * the same number, and the coordinator answers it without applying it twice. Left out (older agents),
   * every batch is applied.
   */
  batchSeq: z.number().int().positive().optional(),
});
export type ReportRequest = z.input<typeof reportRequestSchema>;

export const leaveRequestSchema = z.object({
  incarnation: z.number().int().positive(),
  reason: z.string().max(500).default('left'),
});

export const runSpecSchema = z.object({
  name: z.string().min(1).max(120).default('training run'),
  command: z.array(z.string().max(4096)).min(1).max(256),
  samples: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  minWorkers: z.number().int().min(1).default(1),
  maxWorkers: z.number().int().min(1).default(64),
  heartbeatTimeoutMs: z.number().int().min(500).max(600_000).default(5000),
  maxRestarts: z.number().int().min(0).max(1000).default(3),
  nprocPerNode: z.union([z.number().int().min(1).max(64), z.literal('gpu')]).default(1),
  useGpus: z.boolean().default(false),
  launcher: z.enum(['torchrun', 'direct']).default('torchrun'),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(10_000)).default({}),
}).refine((s) => s.minWorkers <= s.maxWorkers, { message: 'minWorkers must be <= maxWorkers', path: ['minWorkers'] });
export type RunSpecInput = z.input<typeof runSpecSchema>;

/** Error body of every non-2xx reply. */
export interface ApiError {
  error: string;
}
