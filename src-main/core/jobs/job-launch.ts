/**
 * The runJob instruction for a claimed job: its command and the job environment (docs/jobs.md, docs/api.md).
 * The agent adds what only it knows: GPU_SHARE_OUTPUT_DIR, GPU_SHARE_ATTEMPT and CUDA_VISIBLE_DEVICES. A job with a
 * project names its snapshot, the members that may hold it and its peer key: the agent fetches it (from them first)
 * and runs the command in its folder.
 */
import { formatClaimToken } from '../../../src-shared/jobs/job-protocol';
import type { ProjectPeer } from '../../../src-shared/projects/peer-sources';
import type { WorkerGpu } from '../../../src-shared/training';
import type { Instruction } from '../../../src-shared/worker-protocol';
import type { JobRow } from '../state/jobs-repo';

export function jobEnvironment(row: JobRow): Record<string, string> {
  return {
    GPU_SHARE_JOB_ID: row.id,
    GPU_SHARE_JOB_NAME: row.name,
    GPU_SHARE_MODEL: row.spec.model,
    GPU_SHARE_MODE: row.spec.mode,
    GPU_SHARE_HYPER: JSON.stringify(row.spec.hyper),
    GPU_SHARE_SEED: String(row.spec.seed),
  };
}

/** `peers`: the members that may hold the job's snapshot and its key (job-project.ts jobProjectPeers), when it has one. */
export function runJobInstruction(row: JobRow, gpus: readonly WorkerGpu[], peers?: { peers: ProjectPeer[]; peerKey: string }): Instruction {
  if (row.claimId === null) throw new Error(`job ${row.id} has no claim to launch`);
  const gpu = row.gpuIndex === null ? null : gpus[row.gpuIndex] ?? null;
  return {
    kind: 'runJob',
    job: {
      jobId: row.id,
      token: formatClaimToken({ claimId: row.claimId, attempt: row.attempts }),
      attempt: row.attempts,
      name: row.name,
      command: row.spec.command,
      env: jobEnvironment(row),
      gpuIndex: row.gpuIndex,
      gpuUuid: gpu?.uuid ?? null,
      ...(row.spec.project ? { project: { snapshot: row.spec.project.snapshot, ...peers } } : {}),
    },
  };
}
