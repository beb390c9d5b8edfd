/**
 * The coordinator's HTTP API for worker agents and operators: paths, bodies and replies, parsed with zod
 * on both ends. worker-api.ts pairs each path with its method, auth and schemas (the table the server and the
 * agent's client are built from). Human documentation with examples lives in docs/api.md; keep the two in step.
 */
import { workerResourcesSchema } from './resources/worker-resources';
import { z } from 'zod';
import { commSpecProblem } from './scheduling/comm-choice';
import { COMM_SETTINGS, MAX_LOCAL_SGD_PERIOD } from './scheduling/comm-types';
import { cancelJobInstructionSchema, gpuFreeSchema, jobBeatSchema, runJobInstructionSchema } from './jobs/job-protocol';
import { acceptLinkProbeInstructionSchema, linksReportSchema, measureLinksInstructionSchema } from './links/link-probe-protocol';
import { progressReportSchema } from './runs/progress-report';
import { commUpdateInstructionSchema } from './runs/comm-control';
import { runPlacementSchema } from './scheduling/run-placement-spec';
export { runPlacementSchema, type RunPlacement } from './scheduling/run-placement-spec';
import { heldSnapshotsSchema, launchProjectSchema, prepareProjectInstructionSchema, preparedReportSchema, runProjectSpecFields, serveSnapshotInstructionSchema } from './projects/project-protocol';

export const API_VERSION = 1;

/**
 * Header that carries the per-session secret handed out at join. Every worker request after the join needs
 * it besides the join token, so a machine that holds only the join token cannot speak for another worker.
 */
export const SESSION_HEADER = 'x-gpu-share-session';

/**
 * Headers of a signed worker request (docs/api.md, "Node identity"): the node's Ed25519 key signs
 * signedRequestText(…) of each request, so a stolen join token and session secret are not enough to speak for it.
 */
export const SIGNATURE_HEADERS = { time: 'x-gpu-share-time', nonce: 'x-gpu-share-nonce', signature: 'x-gpu-share-signature' } as const;

/**
 * How far a signed request's time may be from the coordinator's clock, either way (±60 s: NTP keeps clocks far
 * closer; a shorter window bounds how long each key's nonces must be remembered).
 */
export const SIGNATURE_WINDOW_MS = 60_000;

/** The text a request's signature covers: method, path (with query), time, nonce and the body's SHA-256 (hex). */
export function signedRequestText(method: string, pathAndQuery: string, time: string, nonce: string, bodySha256Hex: string): string {
  return `${method.toUpperCase()}\n${pathAndQuery}\n${time}\n${nonce}\n${bodySha256Hex}`;
}

/** What a node name may be: what `gpu-share worker --name` accepts (no spaces, no control characters). */
export const NODE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Close codes of the presence WebSocket. The agent closes with BYE when it leaves or exits on purpose (the
 * "deathrattle": the coordinator takes it as a leave at once); with RECONNECTING when it replaces a socket it
 * thinks is stale. A socket that ends without a close frame, by an orderly TCP close from the agent's
 * machine, means the agent's process is gone: its kernel closed the socket.
 */
export const PRESENCE_CLOSE = { BYE: 4000, RECONNECTING: 4001, REPLACED: 4002, REFUSED: 4003 } as const;

/**
 * The one message the coordinator sends on a presence socket: "instructions are waiting, heartbeat now". The
 * instructions themselves still travel in the heartbeat answer (numbered, acknowledged); this only saves the
 * wait for the next interval when a generation is relaunched.
 */
export const PRESENCE_POKE = '{"type":"poke"}';

/** Bounds an agent clamps the coordinator's timings to, whatever it is sent. */
export const TIMING_BOUNDS = {
  heartbeatIntervalMs: { min: 100, max: 60_000 },
  heartbeatTimeoutMs: { min: 500, max: 600_000 },
} as const;

/**
 * A coordinator epoch: 12 random bytes in base64url, new at each start of the coordinator. Error answers to worker
 * requests carry it too (`{ "error": …, "epoch": … }`), so an agent tells "the coordinator restarted" (another
 * epoch) from "this coordinator declared you failed" (the same one).
 */
export const COORDINATOR_EPOCH_PATTERN = /^[A-Za-z0-9_-]{16}$/;

/** Caps on strings a worker sends, so no field can grow the coordinator's memory without bound. */
export const FIELD_CAPS = { id: 200, name: 200, text: 2000 } as const;

export const apiPaths = {
  health: '/v1/health',
  join: '/v1/join',
  joinChallenge: '/v1/join/challenge',
  heartbeat: (workerId: number) => `/v1/workers/${workerId}/heartbeat`,
  report: (workerId: number) => `/v1/workers/${workerId}/report`,
  leave: (workerId: number) => `/v1/workers/${workerId}/leave`,
  /** WebSocket upgrade (GET): held open while the agent lives; its end tells the coordinator at once. */
  presence: (workerId: number) => `/v1/workers/${workerId}/presence`,
  // operator-only
  state: '/v1/state',
  runs: '/v1/runs',
  run: (runId: string) => `/v1/runs/${encodeURIComponent(runId)}`,
  runOutput: (runId: string) => `/v1/runs/${encodeURIComponent(runId)}/output`,
  stopRun: (runId: string) => `/v1/runs/${encodeURIComponent(runId)}/stop`,
  drain: (workerId: number) => `/v1/workers/${workerId}/drain`,
  /** Prometheus text exposition (operator token; Prometheus sends it as a bearer token). */
  metrics: '/metrics',
} as const;

const gpuSchema = z.object({
  uuid: z.string().max(FIELD_CAPS.name).nullable(),
  name: z.string().max(FIELD_CAPS.name),
  vramTotalMb: z.number().nonnegative().nullable(),
  /** Unified memory (Jetson, Apple) plans with a 60 % reserve instead of 85 %; discrete when left out. */
  memoryType: z.enum(['discrete', 'unified']).optional(),
});

/**
 * The join's first step (docs/api.md, "Joining"): the worker proves nothing yet and sends nothing about itself,
 * only a nonce, which token it holds (an HMAC id, not the token) and the node key the proofs will bind; the
 * coordinator answers with its own nonce and a proof that it holds that token (src-main/platform/join-proof.ts).
 */
export const joinChallengeRequestSchema = z.object({
  workerNonce: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'workerNonce must be 32 random bytes in base64url (43 characters)'),
  tokenId: z.string().regex(/^[0-9a-f]{16}$/, 'tokenId must be 16 lower-case hex digits'),
  nodePublicKey: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'nodePublicKey must be a raw Ed25519 key: 32 bytes in base64url (43 characters)').optional(),
});
export type JoinChallengeRequest = z.input<typeof joinChallengeRequestSchema>;

export const joinChallengeReplySchema = z.object({
  challengeId: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
  coordinatorNonce: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  proof: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
});
export type JoinChallengeReply = z.infer<typeof joinChallengeReplySchema>;

/** Headers of the join itself: the challenge it answers and the worker's proof (it carries no Authorization header). */
export const JOIN_CHALLENGE_HEADER = 'x-gpu-share-join-challenge';
export const JOIN_PROOF_HEADER = 'x-gpu-share-join-proof';

/** What a worker says about itself when it joins. */
export const joinRequestSchema = z.object({
  node: z.string().regex(NODE_NAME_PATTERN, 'a node name starts with a letter or digit and uses only letters, digits, ".", "_" and "-" (at most 128)'),
  agentVersion: z.string().max(64),
  /**
   * A random secret the agent keeps in its data folder (0600) and sends with every join: the node name is bound
   * to the first machine that joined with it, and a machine that cannot show the same secret cannot take it.
   */
  machineId: z.string().regex(/^[A-Za-z0-9_-]{20,128}$/, 'machineId must be 20–128 base64url characters'),
  gpus: z.array(gpuSchema).max(64),
  cpuCores: z.number().int().nonnegative().max(100_000),
  ramMb: z.number().nonnegative().max(1e12),
  /**
   * Host other workers can reach this one at (for the rendezvous store when it is rank 0). It must be the
   * address the coordinator sees the worker connect from, unless the operator allows other addresses.
   */
  advertiseHost: z.string().min(1).max(255),
  /** A TCP port free on this worker, for hosting the rendezvous store. */
  rdzvPort: z.number().int().min(1).max(65535),
  /** Every port it offers for rendezvous stores (rdzvPort first; one per GPU set it may train a run on); older agents: none. */
  rdzvPorts: z.array(z.number().int().min(1).max(65535)).min(1).max(16).optional(),
  /** The port of the agent's link probe server (links are measured agent to agent); left out by older agents. */
  probePort: z.number().int().min(1).max(65535).optional(),
  /** The port of the agent's project blob server (members fetch snapshot files from each other); left out by older agents. */
  blobPort: z.number().int().min(1).max(65535).optional(),
  /** Python interpreter found on the worker, with torch's version; null if none has torch. */
  python: z.object({ path: z.string().max(4096), torchVersion: z.string().max(FIELD_CAPS.name) }).nullable(),
  /** True when the agent runs inside the desktop app; refused unless the join comes from the coordinator's own machine. */
  local: z.boolean().default(false),
  /**
   * The node's Ed25519 public key (raw 32 bytes, base64url). Pinned at the first join; every later request must
   * be signed by it. Left out by older agents, which join unsigned.
   */
  publicKey: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'publicKey must be a raw Ed25519 key: 32 bytes in base64url (43 characters)').optional(),
  /**
   * Sent by an agent that lost a coordinator and kept its training: "I am still incarnation N of the coordinator
   * epoch E, running this generation". A coordinator that restarted (epoch E before it) and is within its failover
   * grace takes the worker back as it was: same incarnation, the run goes on without a relaunch. Signed with the
   * rest of the join's body by the node key. Any other coordinator refuses it, saying why, and the join is an ordinary one.
   */
  reattach: z
    .object({
      epoch: z.string().regex(COORDINATOR_EPOCH_PATTERN),
      incarnation: z.number().int().positive(),
      runId: z.string().max(FIELD_CAPS.id).nullable(),
      generation: z.number().int().nonnegative().nullable(),
      /** Every run generation it kept (one per GPU set; `ended`: its trainer exited since); runId/generation name the first. */
      runs: z.array(z.object({ runId: z.string().max(FIELD_CAPS.id), generation: z.number().int().nonnegative(), ended: z.boolean().optional() })).max(64).optional(),
    })
    .optional(),
});
export type JoinRequest = z.input<typeof joinRequestSchema>;
export type ReattachClaim = NonNullable<z.infer<typeof joinRequestSchema>['reattach']>;

export const joinResponseSchema = z.object({
  workerId: z.number().int().nonnegative(),
  incarnation: z.number().int().positive(),
  heartbeatIntervalMs: z.number().int().positive(),
  heartbeatTimeoutMs: z.number().int().positive(),
  /** The session's secret: sent in SESSION_HEADER with every later request of this incarnation. */
  sessionSecret: z.string().regex(/^[A-Za-z0-9_-]{20,200}$/),
  /** The coordinator's epoch: random, new at each start. Left out by older coordinators. */
  epoch: z.string().regex(COORDINATOR_EPOCH_PATTERN).optional(),
  /** How long this coordinator, restarted, waits for a worker that was live to re-attach (ms). */
  failoverGraceMs: z.number().int().nonnegative().optional(),
  /**
   * The answer to a join's re-attach claim: `accepted` (the worker and its generation go on), or why not, in
   * words (then the agent stops what it kept running). Left out for a join without a claim.
   */
  reattach: z.union([z.object({ accepted: z.literal(true) }), z.object({ accepted: z.literal(false), reason: z.string().max(FIELD_CAPS.text) })]).optional(),
});
export type JoinResponse = z.infer<typeof joinResponseSchema>;

/**
 * HTTP 202 to a join whose node key nobody approved yet: the machine is listed as awaiting approval and gets
 * nothing else (no worker id, no session); its agent asks again after retryAfterMs.
 */
export const joinAwaitingSchema = z.object({
  status: z.literal('awaiting-approval'),
  node: z.string().max(FIELD_CAPS.name),
  fingerprint: z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/),
  retryAfterMs: z.number().int().nonnegative(),
});
export type JoinAwaitingReply = z.infer<typeof joinAwaitingSchema>;
/** Every 2xx answer to a join: admitted (200) or awaiting approval (202). */
export const joinReplySchema = z.union([joinResponseSchema, joinAwaitingSchema]);

/** Progress a trainer printed, as the agent last parsed it. */
export const progressSchema = z.object({
  runId: z.string().max(FIELD_CAPS.id),
  generation: z.number().int().nonnegative(),
  step: z.number().int().nonnegative(),
  loss: z.number().nullable(),
  samplesPerSec: z.number().nonnegative().nullable(),
  resumedFrom: z.number().int().nonnegative().nullable(),
  /** The trainer's total_steps, so a heartbeat that beats the first progress report still says "of N"; older agents leave it out. */
  totalSteps: z.number().int().positive().nullable().optional(),
});
export type Progress = z.infer<typeof progressSchema>;

export const heartbeatRequestSchema = z.object({
  incarnation: z.number().int().positive(),
  progress: progressSchema.nullable().default(null),
  /** The latest progress of every run it trains now (one per GPU set); left out by older agents: `progress` alone. */
  runs: z.array(progressSchema).max(64).optional(),
  /**
   * Sequence number of the last instruction the agent has taken (0: none yet). With it the coordinator keeps
   * handing out an instruction until it is acknowledged, so an answer lost on the way (a timeout after the
   * coordinator had answered) loses no instruction. Left out, each instruction is handed out once (older agents).
   */
  ack: z.number().int().nonnegative().optional(),
  /** The adapter jobs it runs now, each with its claim token, measured VRAM and progress. */
  jobs: z.array(jobBeatSchema).max(256).optional(),
  /** Free memory per GPU (nvidia-smi), so no budget promises more than the GPU has. */
  gpuFree: z.array(gpuFreeSchema).max(64).optional(),
  /** How busy the machine is (CPU, RAM, each GPU), for the run view's per-worker resources; absent from older agents. */
  resources: workerResourcesSchema.optional(),
  /** The project snapshots its cache holds, newest first: offered as peers to fetchers of the same snapshot. */
  snapshots: heldSnapshotsSchema.optional(),
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
  /**
   * The address the other members reach this worker at: torch gets it as the rank-0 address (MASTER_ADDR)
   * and gloo/NCCL bind to the interface that holds it, so machines whose host names do not resolve to each
   * other still form a group.
   */
  localAddr: z.string().max(255),
  /** Whether this worker hosts the generation's c10d rendezvous store (the coordinator decides; torch never guesses). */
  rdzvHost: z.boolean(),
  /**
   * The GPUs (indices on this node) this member holds: the agent sets CUDA_VISIBLE_DEVICES to them. Left out
   * (older coordinators, CPU runs): every GPU the node has when useGpus, none otherwise.
   */
  gpuIndices: z.array(z.number().int().nonnegative().max(1023)).max(64).optional(),
  /** The run's project snapshot (the trainer's working directory) and this member's data; left out: no project. */
  project: launchProjectSchema.optional(),
});
export type LaunchPlan = z.infer<typeof launchPlanSchema>;

export const instructionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('start'), plan: launchPlanSchema }),
  z.object({ kind: z.literal('stop'), runId: z.string(), generation: z.number().int().nonnegative(), reason: z.string() }),
  /** Finish the current step, stop training, then leave. */
  z.object({ kind: z.literal('drain'), reason: z.string() }),
  /** Run one adapter job attempt beside whatever else runs (jobs/job-protocol.ts). */
  runJobInstructionSchema,
  cancelJobInstructionSchema,
  acceptLinkProbeInstructionSchema,
  measureLinksInstructionSchema,
  prepareProjectInstructionSchema,
  serveSnapshotInstructionSchema,
  commUpdateInstructionSchema,
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
  z.object({
    type: z.literal('output'),
    runId: z.string().max(FIELD_CAPS.id),
    generation: z.number().int().nonnegative(),
    data: z.string().max(1_000_000),
    /** True when this output's progress lines also went as `progress` reports: the coordinator does not re-read them. Left out (older agents), it does. */
    progressSent: z.boolean().optional(),
  }),
  z.object({ type: z.literal('started'), runId: z.string().max(FIELD_CAPS.id), generation: z.number().int().nonnegative(), pid: z.number().int().positive() }),
  z.object({
    type: z.literal('exited'),
    runId: z.string().max(FIELD_CAPS.id),
    generation: z.number().int().nonnegative(),
    exitCode: z.number().int().nullable(),
    signal: z.number().int().nullable(),
    /** True when the agent stopped it on the coordinator's instruction. */
    requested: z.boolean(),
  }),
  z.object({
    type: z.literal('residency'),
    runId: z.string().max(FIELD_CAPS.id),
    generation: z.number().int().nonnegative(),
    status: z.enum(['pass', 'fail']),
    detail: z.string().max(2000),
    pid: z.number().int().positive(),
    usedMib: z.number().nonnegative().nullable(),
  }),
  linksReportSchema,
  progressReportSchema,
  preparedReportSchema,
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


/** A run's max workers when it does not say: the one default of the API, `runs start`, the app's form and the example. */
export const DEFAULT_MAX_WORKERS = 64;

export const runSpecSchema = z.object({
  name: z.string().min(1).max(120).default('training run'),
  command: z.array(z.string().max(4096)).min(1).max(256),
  samples: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  minWorkers: z.number().int().min(1).default(1),
  maxWorkers: z.number().int().min(1).default(DEFAULT_MAX_WORKERS),
  heartbeatTimeoutMs: z.number().int().min(500).max(600_000).default(5000),
  maxRestarts: z.number().int().min(0).max(1000).default(3),
  nprocPerNode: z.union([z.number().int().min(1).max(64), z.literal('gpu')]).default(1),
  useGpus: z.boolean().default(false),
  launcher: z.enum(['torchrun', 'direct']).default('torchrun'),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(10_000)).default({}),
  /** Where members may be placed: the same constraints an adapter job has (src-shared/scheduling). */
  placement: runPlacementSchema.optional(),
  /** How members exchange gradients: auto (default), ddp, fp16, powersgd (a CPU run: torch 2+ on every member, else fp16), local-sgd. */
  comm: z.enum(COMM_SETTINGS).default('auto'),
  /** Steps between model averages for comm local-sgd. */
  localSgdPeriod: z.number().int().min(1).max(MAX_LOCAL_SGD_PERIOD).optional(),
  /** A project shipped to every member, its data and the modules it needs (projects/project-protocol.ts). */
  ...runProjectSpecFields,
})
  .refine((s) => s.minWorkers <= s.maxWorkers, { message: 'minWorkers must be <= maxWorkers', path: ['minWorkers'] })
  .superRefine((s, ctx) => {
    const problem = commSpecProblem(s);
    if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem.message, path: [problem.path] });
  });
export type RunSpecInput = z.input<typeof runSpecSchema>;

/** Error body of every non-2xx reply. */
export interface ApiError {
  error: string;
}
