/**
 * The wire side of adapter jobs: what the coordinator tells an agent to run, what the agent reports back, and
 * the fencing token that keeps a late answer from an old claim from touching a newer one. worker-api.ts pairs
 * these bodies with their paths; docs/api.md describes them for people.
 */
import { z } from 'zod';
import { preparePeerFields } from '../projects/peer-sources';

/** Same caps as worker-protocol.ts's FIELD_CAPS (not imported: that file imports this one). */
const FIELD_CAPS = { name: 200, text: 2000 } as const;

/** A job id: the sha256 (hex) of its defining fields. */
export const JOB_ID_PATTERN = /^[0-9a-f]{64}$/;
/** An artifact id: the sha256 (hex) of its tarball. */
export const SHA256_PATTERN = /^[0-9a-f]{64}$/;

/**
 * Fencing token of one claim: `<claimId>.<attempt>`. Every later call about the job carries it, and the
 * queue accepts only the token of the claim it holds now; a worker that lost its claim (swept, cancelled,
 * given to another) gets 409 and must stop.
 */
export const CLAIM_TOKEN_PATTERN = /^[A-Za-z0-9_-]{8,64}\.[1-9][0-9]{0,5}$/;

export interface ClaimToken {
  claimId: string;
  attempt: number;
}

export function formatClaimToken(token: ClaimToken): string {
  return `${token.claimId}.${token.attempt}`;
}

export function parseClaimToken(text: string): ClaimToken | null {
  if (!CLAIM_TOKEN_PATTERN.test(text)) return null;
  const dot = text.lastIndexOf('.');
  return { claimId: text.slice(0, dot), attempt: Number(text.slice(dot + 1)) };
}

const jobId = z.string().regex(JOB_ID_PATTERN, 'a job id is 64 lowercase hex digits');
const claimToken = z.string().regex(CLAIM_TOKEN_PATTERN, 'a claim token is <claimId>.<attempt>');

/** How an agent must start one job attempt. */
export const jobLaunchSchema = z.object({
  jobId,
  token: claimToken,
  attempt: z.number().int().positive(),
  name: z.string().max(FIELD_CAPS.name),
  command: z.array(z.string().max(4096)).min(1).max(256),
  /** The job's own variables (GPU_SHARE_JOB_ID, GPU_SHARE_HYPER, …); the agent adds GPU_SHARE_OUTPUT_DIR and CUDA_VISIBLE_DEVICES. */
  env: z.record(z.string(), z.string().max(10_000)),
  /** GPU given to the job on this node (index as the worker reported it at join); null: CPU only. */
  gpuIndex: z.number().int().nonnegative().nullable(),
  gpuUuid: z.string().max(FIELD_CAPS.name).nullable(),
  /**
   * The manifest's project: the agent fetches this snapshot and runs the command in its folder. Absent: none. As
   * a run's `prepare`, it names the members that may hold the files (best link first) and the snapshot's peer key.
   */
  project: z.object({ snapshot: z.string().regex(SHA256_PATTERN), peers: preparePeerFields.peers, peerKey: preparePeerFields.peerKey }).optional(),
});
export type JobLaunch = z.infer<typeof jobLaunchSchema>;

export const runJobInstructionSchema = z.object({ kind: z.literal('runJob'), job: jobLaunchSchema });
/** Stop the job's process tree (cancelled by the operator, or its claim moved on); no complete/fail follows. */
export const cancelJobInstructionSchema = z.object({ kind: z.literal('cancelJob'), jobId, token: claimToken, reason: z.string().max(FIELD_CAPS.text) });

/** What the agent says about each job it runs, with every heartbeat. */
export const jobBeatSchema = z.object({
  jobId,
  token: claimToken,
  /** VRAM its process tree uses now (nvidia-smi --query-compute-apps), MiB; null when not measurable. */
  usedMib: z.number().nonnegative().nullable(),
  progress: z.object({ step: z.number().int().nonnegative(), totalSteps: z.number().int().positive().nullable(), loss: z.number().nullable() }).nullable(),
});
export type JobBeat = z.infer<typeof jobBeatSchema>;

/** Free memory per GPU as nvidia-smi reports it, sent with heartbeats; budgets never exceed it. */
export const gpuFreeSchema = z.object({ index: z.number().int().nonnegative(), uuid: z.string().max(FIELD_CAPS.name).nullable(), freeMb: z.number().nonnegative() });
export type GpuFree = z.infer<typeof gpuFreeSchema>;

export const jobStartedSchema = z.object({ token: claimToken, pid: z.number().int().positive() });
export const jobOutputSchema = z.object({ token: claimToken, data: z.string().max(1_000_000) });
export const jobCompleteSchema = z.object({
  token: claimToken,
  /** The uploaded tarball (PUT …/artifact/<sha256> first). */
  artifactSha256: z.string().regex(SHA256_PATTERN),
  sizeBytes: z.number().int().nonnegative(),
});
export const jobFailSchema = z.object({
  token: claimToken,
  exitCode: z.number().int().nullable(),
  signal: z.number().int().nullable(),
  /** One line: "exited with code 1", "could not pack the output: …". */
  error: z.string().max(FIELD_CAPS.text),
  /** The last lines it printed. */
  outputTail: z.string().max(16_384),
});
export type JobFail = z.infer<typeof jobFailSchema>;

/** The job's state after a worker call: the agent stops the job when it is no longer its claim. */
export const jobAckSchema = z.object({ ok: z.literal(true), status: z.string() });

/** Header carrying the claim token on an artifact upload (its body is the tarball itself). */
export const CLAIM_TOKEN_HEADER = 'x-gpu-share-claim-token';
/** Largest artifact the coordinator takes by default (an adapter is MBs; a merged model would not be). */
export const DEFAULT_MAX_ARTIFACT_BYTES = 2 * 1024 ** 3;

/** Operator: submit or reload a manifest (TOML text). */
export const manifestSubmitSchema = z.object({ fileName: z.string().min(1).max(1024), text: z.string().max(4 * 1024 * 1024) });
