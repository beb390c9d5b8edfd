/**
 * The environment a training process gets: a filtered copy of ours plus what the run needs. Passing our own
 * environment through unfiltered would hand training scripts the agent's join token, Electron's and Node's
 * switches (ELECTRON_RUN_AS_NODE turns a child Electron into Node; NODE_OPTIONS can inject code into any Node
 * child), and stale launcher variables (RANK, MASTER_PORT, CUDA_VISIBLE_DEVICES) that would confuse torchrun.
 */
import { PROJECT_ENV } from '../../../src-shared/projects/project-protocol';

/** Exact names never inherited. */
export const BLOCKED_ENV_KEYS: ReadonlySet<string> = new Set([
  'NODE_OPTIONS',
  'NODE_CHANNEL_FD',
  'NODE_CHANNEL_SERIALIZATION_MODE',
  'NODE_UNIQUE_ID',
  'NODE_EXTRA_CA_CERTS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'NODE_V8_COVERAGE',
  'NODE_INSPECT_RESUME_ON_START',
  'UV_THREADPOOL_SIZE',
  // torchrun / torch.distributed state from whatever started us: ours is set per launch.
  'RANK',
  'LOCAL_RANK',
  'GROUP_RANK',
  'ROLE_RANK',
  'WORLD_SIZE',
  'LOCAL_WORLD_SIZE',
  'GROUP_WORLD_SIZE',
  'ROLE_WORLD_SIZE',
  'MASTER_ADDR',
  'MASTER_PORT',
  'CUDA_VISIBLE_DEVICES',
  'NVIDIA_VISIBLE_DEVICES',
]);

/** Name prefixes never inherited: Electron's switches, the app's own settings and secrets, launcher state. */
export const BLOCKED_ENV_PREFIXES: readonly string[] = ['ELECTRON_', 'GPU_SHARE_', 'TORCHELASTIC_', 'npm_', 'VSCODE_'];

export function isBlockedEnvKey(key: string): boolean {
  return BLOCKED_ENV_KEYS.has(key) || BLOCKED_ENV_PREFIXES.some((p) => key.startsWith(p));
}

/**
 * The GPU_SHARE_* names a trainer or launcher may see (docs/api.md "Environment of a training process", docs/
 * jobs.md "The job's environment", and the example trainers' own settings). Every other GPU_SHARE_* name is
 * dropped even from the run's or job's own env and the launcher's: GPU_SHARE_JOIN_TOKEN, GPU_SHARE_OPERATOR_TOKEN
 * and whatever secret a later version might name GPU_SHARE_* can never reach training, whoever put it there.
 */
export const TRAINER_GPU_SHARE_NAMES: ReadonlySet<string> = new Set([
  // An elastic run's plan (launch-plan.ts) and the agent's own additions.
  'GPU_SHARE_RUN_ID',
  'GPU_SHARE_GENERATION',
  'GPU_SHARE_WORKER_ID',
  'GPU_SHARE_NODE',
  'GPU_SHARE_SAMPLES',
  'GPU_SHARE_SHARD_START',
  'GPU_SHARE_SHARD_END',
  'GPU_SHARE_NUM_WORKERS',
  'GPU_SHARE_CHECKPOINT_DIR',
  'GPU_SHARE_LOCAL_ADDR',
  // The generation's communication decision (issue 16): read by gpu_share_comm.py and the launcher shim.
  'GPU_SHARE_COMM',
  'GPU_SHARE_LOCAL_SGD_PERIOD',
  'GPU_SHARE_LOCAL_SGD_WARMUP',
  'GPU_SHARE_NODE_RANK',
  // Where the agent writes a changed local-SGD period for the running trainer (src-shared/runs/comm-control.ts).
  'GPU_SHARE_COMM_CONTROL',
  // An adapter job (job-launch.ts) and the agent's additions.
  'GPU_SHARE_JOB_ID',
  'GPU_SHARE_JOB_NAME',
  'GPU_SHARE_MODEL',
  'GPU_SHARE_MODE',
  'GPU_SHARE_HYPER',
  'GPU_SHARE_SEED',
  'GPU_SHARE_OUTPUT_DIR',
  'GPU_SHARE_ATTEMPT',
  // A run's project (src-shared/projects/project-protocol.ts).
  ...Object.values(PROJECT_ENV),
  // Settings the example trainers read, which a run's or job's env may set.
  'GPU_SHARE_CACHE_DIR',
  'GPU_SHARE_CORPUS_DIR',
]);

/** Whether a name given for a training process (plan, job, launcher) is kept: GPU_SHARE_* only from the list. */
export function isTrainerEnvKey(key: string): boolean {
  return !key.startsWith('GPU_SHARE_') || TRAINER_GPU_SHARE_NAMES.has(key);
}

/** A copy of `env` (a plan's, a job's or a launcher's) without the GPU_SHARE_* names a trainer never gets. */
export function trainerEnv(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (isTrainerEnvKey(key)) out[key] = value;
  return out;
}

/** A copy of `env` without blocked names or undefined values. */
export function filterInheritedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || isBlockedEnvKey(key)) continue;
    out[key] = value;
  }
  return out;
}

export interface TrainingEnvInput {
  /** The agent's own environment, filtered before use. */
  inherited: NodeJS.ProcessEnv;
  /** GPU_SHARE_* and the run's own variables, from the coordinator's plan. */
  planEnv: Record<string, string>;
  /** Variables the launcher needs (the direct launcher's RANK=0 …). */
  launcherEnv?: Record<string, string>;
  checkpointDir: string;
  /** A run's project (PROJECT_ENV): set by this agent, so no plan can point them elsewhere. */
  projectEnv?: Record<string, string>;
  /** UUIDs of the GPUs the run may use; empty hides every GPU so a CPU run never grabs one. */
  gpuUuids: string[];
}

/**
 * Builds the env of a launch. Later sources win: inherited < plan < launcher < ours, so a plan cannot point
 * checkpoints or GPUs somewhere this agent did not choose; no GPU Share token gets in from any of them.
 */
export function buildTrainingEnv(input: TrainingEnvInput): Record<string, string> {
  return {
    ...filterInheritedEnv(input.inherited),
    PYTHONUNBUFFERED: '1',
    ...withoutProjectEnv(trainerEnv(input.planEnv), input.projectEnv),
    ...withoutProjectEnv(trainerEnv(input.launcherEnv ?? {}), input.projectEnv),
    ...(input.projectEnv ?? {}),
    GPU_SHARE_CHECKPOINT_DIR: input.checkpointDir,
    CUDA_VISIBLE_DEVICES: input.gpuUuids.join(','),
  };
}

/** With a project, its variables are this agent's alone: one it leaves unset (a list too long) stays unset. */
function withoutProjectEnv(env: Record<string, string>, projectEnv: Record<string, string> | undefined): Record<string, string> {
  if (!projectEnv) return env;
  const out = { ...env };
  for (const key of Object.values(PROJECT_ENV)) delete out[key];
  return out;
}
