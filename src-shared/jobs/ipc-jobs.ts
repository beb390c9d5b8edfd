/**
 * The Jobs and Artifacts views' channels, spread into ipc.ts's maps (kept here so the contract for jobs reads
 * in one place). The handlers live in src-main/core/jobs; the transports carry them like every other channel.
 */
import { z } from 'zod';
import { JOB_ID_PATTERN, SHA256_PATTERN } from './job-protocol';
import { MAX_JOBS_PAGE_LIMIT } from './jobs-page';
import type { ArtifactSnapshot, JobsState, ManifestSubmitResult, PlacementPolicy } from './types';
import { artifactRetentionSchema, type ArtifactHousekeeping, type ArtifactRetention } from './artifact-retention';

const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const jobIdArg = z.object({ jobId: z.string().regex(JOB_ID_PATTERN, 'a job id is 64 lowercase hex digits') });

export const jobRequests = {
  /** The counts and one page of the queue (the first 200 jobs when no page is given); the onJobs feed then sends that page. */
  getJobs: {
    channel: 'jobs:state',
    arg: z
      .object({
        offset: z.number().int().min(0).max(999_999_999),
        limit: z.number().int().min(1).max(MAX_JOBS_PAGE_LIMIT),
        status: z.enum(['pending', 'claimed', 'running', 'completed', 'failed', 'cancelled']).nullable(),
      })
      .partial()
      .optional(),
  },
  /** A dropped or chosen manifest (TOML); one character over the cap so the parser names the file when too large. */
  submitManifest: { channel: 'jobs:submit', arg: z.object({ fileName: z.string().max(1024), text: z.string().max(MAX_MANIFEST_BYTES + 1) }) },
  /** Submits the last manifest's file again (it was changed on disk). */
  reloadManifest: { channel: 'jobs:reload', arg: z.undefined() },
  cancelJob: { channel: 'jobs:cancel', arg: jobIdArg },
  requeueJob: { channel: 'jobs:requeue', arg: jobIdArg },
  /** An ended job and its output, gone for good (its artifact stays; a live job is refused). */
  deleteJob: { channel: 'jobs:delete', arg: jobIdArg },
  getJobOutput: { channel: 'jobs:output', arg: jobIdArg },
  setPlacementPolicy: { channel: 'jobs:placement', arg: z.object({ policy: z.enum(['binpack', 'spread']) }) },
  getArtifacts: { channel: 'artifacts:list', arg: z.undefined() },
  /** The tarball, base64, for the page to save (adapters are MBs; larger ones are refused with the CLI command to use). */
  getArtifact: { channel: 'artifacts:get', arg: z.object({ sha256: z.string().regex(SHA256_PATTERN, 'an artifact id is 64 lowercase hex digits') }) },
  /** Deletes the artifact (rows, then bytes); refused while a job that made it runs again or it is being moved. */
  deleteArtifact: { channel: 'artifacts:delete', arg: z.object({ sha256: z.string().regex(SHA256_PATTERN, 'an artifact id is 64 lowercase hex digits') }) },
  /** The retention rule and what is kept under it. */
  getArtifactHousekeeping: { channel: 'artifacts:housekeeping', arg: z.undefined() },
  /** Sets the retention rule and enforces it at once. */
  setArtifactRetention: { channel: 'artifacts:retention', arg: artifactRetentionSchema },
} as const;

export interface JobRequestResults {
  getJobs: JobsState;
  submitManifest: ManifestSubmitResult;
  reloadManifest: ManifestSubmitResult;
  cancelJob: JobsState;
  requeueJob: JobsState;
  deleteJob: JobsState;
  /** `times`: when each line of `text` was received (epoch ms, null where not recorded). */
  getJobOutput: { jobId: string; text: string; times: (number | null)[] };
  setPlacementPolicy: { policy: PlacementPolicy };
  getArtifacts: ArtifactSnapshot[];
  getArtifact: { fileName: string; base64: string };
  deleteArtifact: { sha256: string; removed: boolean; freedBytes: number; stillUsedBy: number };
  getArtifactHousekeeping: ArtifactHousekeeping;
  setArtifactRetention: { retention: ArtifactRetention; removed: { sha256: string; sizeBytes: number; why: string }[] };
}

export const jobEvents = {
  /** The queue, placements or ledger changed (coalesced to a few per second): the page the last getJobs asked for. */
  onJobs: 'jobs:changed',
} as const;

export interface JobEventPayloads {
  onJobs: JobsState;
}
