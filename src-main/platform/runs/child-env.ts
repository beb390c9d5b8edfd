/**
 * The environment a training process gets: a filtered copy of ours plus what the run needs. Passing our own
 * environment through unfiltered would hand training scripts the agent's join token, Electron's and Node's
 * switches (ELECTRON_RUN_AS_NODE turns a child Electron into Node; NODE_OPTIONS can inject code into any Node
 * child), and stale launcher variables (RANK, MASTER_PORT, CUDA_VISIBLE_DEVICES) that would confuse torchrun.
 */

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
  /** UUIDs of the GPUs the run may use; empty hides every GPU so a CPU run never grabs one. */
  gpuUuids: string[];
}

/**
 * Builds the env of a launch. Later sources win: inherited < plan < launcher < ours, so a plan cannot point
 * checkpoints or GPUs somewhere this agent did not choose.
 */
export function buildTrainingEnv(input: TrainingEnvInput): Record<string, string> {
  return {
    ...filterInheritedEnv(input.inherited),
    PYTHONUNBUFFERED: '1',
    ...input.planEnv,
    ...(input.launcherEnv ?? {}),
    GPU_SHARE_CHECKPOINT_DIR: input.checkpointDir,
    CUDA_VISIBLE_DEVICES: input.gpuUuids.join(','),
  };
}
