/**
 * What one worker is told to run for one generation of a run: torchrun's rendezvous settings and the
 * GPU_SHARE_* environment (documented in docs/api.md). Pure, so the env contract is tested on its own.
 */
import type { CommDecision } from '../../../../src-shared/scheduling/comm-types';
import { LOCAL_SGD_WARMUP_STEPS } from '../../../../src-shared/scheduling/drift-bound';
import type { RunSpec } from '../../../../src-shared/training';
import type { LaunchProject } from '../../../../src-shared/projects/project-protocol';
import type { LaunchPlan } from '../../../../src-shared/worker-protocol';

export interface LaunchPlanInput {
  runId: string;
  generation: number;
  spec: RunSpec;
  workerId: number;
  node: string;
  /** This worker's node-level shard, [start, end). */
  shardStart: number;
  shardEnd: number;
  /** Workers (nodes) in this generation. */
  numWorkers: number;
  rdzvEndpoint: string;
  /** The address the other members reach this worker at (see rendezvous-address.ts). */
  localAddr: string;
  /** This worker hosts the generation's c10d store. */
  rdzvHost: boolean;
  /** The GPUs this member holds (CUDA_VISIBLE_DEVICES on the agent); null for a CPU run. */
  gpuIndices?: readonly number[] | null;
  /** The generation's communication strategy (comm-choice.ts): GPU_SHARE_COMM, GPU_SHARE_LOCAL_SGD_PERIOD. */
  comm?: Pick<CommDecision, 'strategy' | 'localSgdPeriod'>;
  /** The run's step as this generation launches (its progress so far; 0 at the start). */
  startStep?: number;
  /** This member's position in the ring order (ring-order.ts): GPU_SHARE_NODE_RANK. */
  nodeRank?: number;
  /** A project run: its snapshot and this member's data (run-project-gate.ts launchProjectFor). */
  project?: LaunchProject | null;
}

/** A generation launched before this step of the run still gets the warm-up (auto's first decision, made blind, is often retaken after the first steps). */
const WARMUP_ONLY_BEFORE_STEP = 10;

/** The trainer-facing variables of a generation's communication (docs/api.md); none when not decided. */
function commEnv(input: LaunchPlanInput): Record<string, string> {
  const env: Record<string, string> = {};
  if (input.comm) {
    env.GPU_SHARE_COMM = input.comm.strategy;
    if (input.comm.strategy === 'local-sgd' && input.comm.localSgdPeriod !== null) {
      env.GPU_SHARE_LOCAL_SGD_PERIOD = String(input.comm.localSgdPeriod);
      // Post-local-SGD: a run that starts (or has barely started) on local SGD averages every step first. Not one
      // that moved to local SGD mid-run because a link slowed: that must not go back to per-step traffic on it.
      if ((input.startStep ?? 0) < WARMUP_ONLY_BEFORE_STEP) env.GPU_SHARE_LOCAL_SGD_WARMUP = String(LOCAL_SGD_WARMUP_STEPS);
    }
  }
  if (input.nodeRank !== undefined) env.GPU_SHARE_NODE_RANK = String(input.nodeRank);
  return env;
}

/** `host:port`, with brackets around an IPv6 address as torchrun's --rdzv_endpoint wants. */
export function formatEndpoint(host: string, port: number): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare.includes(':') ? `[${bare}]:${port}` : `${bare}:${port}`;
}

/** The rendezvous id of one generation: a fresh id, so no agent of an older generation can join it. */
export function rdzvIdFor(runId: string, generation: number): string {
  return `${runId}-g${generation}`;
}

export function buildLaunchPlan(input: LaunchPlanInput): LaunchPlan {
  const { spec } = input;
  const { GPU_SHARE_COMM: _c, GPU_SHARE_LOCAL_SGD_PERIOD: _p, GPU_SHARE_LOCAL_SGD_WARMUP: _w, GPU_SHARE_NODE_RANK: _r, ...ownEnv } = spec.env;
  const env: Record<string, string> = {
    ...ownEnv,
    // Ours last: a run's own env cannot disguise the shard or the generation.
    GPU_SHARE_RUN_ID: input.runId,
    GPU_SHARE_GENERATION: String(input.generation),
    GPU_SHARE_WORKER_ID: String(input.workerId),
    GPU_SHARE_NODE: input.node,
    GPU_SHARE_SAMPLES: String(spec.samples),
    GPU_SHARE_SHARD_START: String(input.shardStart),
    GPU_SHARE_SHARD_END: String(input.shardEnd),
    GPU_SHARE_NUM_WORKERS: String(input.numWorkers),
    ...commEnv(input),
  };
  return {
    runId: input.runId,
    generation: input.generation,
    launcher: spec.launcher,
    command: [...spec.command],
    // MIN:n with n = this generation's members: the rendezvous closes the moment all of them are in.
    nnodes: `${Math.min(spec.minWorkers, input.numWorkers)}:${input.numWorkers}`,
    nprocPerNode: spec.nprocPerNode,
    rdzvEndpoint: input.rdzvEndpoint,
    rdzvId: rdzvIdFor(input.runId, input.generation),
    maxRestarts: spec.maxRestarts,
    env,
    useGpus: spec.useGpus,
    localAddr: input.localAddr,
    rdzvHost: input.rdzvHost,
    ...(input.gpuIndices ? { gpuIndices: [...input.gpuIndices] } : {}),
    ...(input.project ? { project: { ...input.project, dataFiles: input.project.dataFiles ? [...input.project.dataFiles] : null } } : {}),
  };
}
