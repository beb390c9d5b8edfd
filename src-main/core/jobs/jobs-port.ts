/**
 * What the HTTP API and the IPC handlers need from the job service (job-service.ts implements it), so the
 * routes can be written and tested without the scheduler behind them. Every method throws ApiProblem with the
 * status to answer: 404 unknown job, 409 a claim token that is not the job's current claim, 400 bad input.
 */
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { jobCompleteSchema, jobFailSchema, jobOutputSchema, jobStartedSchema } from '../../../src-shared/jobs/job-protocol';
import type { ArtifactSnapshot, JobSnapshot, JobsPageQuery, JobsState, ManifestSubmitResult } from '../../../src-shared/jobs/types';
import type { TimedJobOutput } from '../state/job-output';
import type { ArtifactHousekeeping } from './artifact-housekeeping';
import type { StoredArtifact } from './artifact-store';

// StoredArtifact is defined beside the store that makes it (artifact-store.ts): defined here, the store, this port
// and the housekeeping the port names imported each other in a circle.
export type { StoredArtifact };

export interface JobAck {
  ok: true;
  /** The job's status after the call. */
  status: string;
}

export interface JobsPort {
  // --- the worker side: `workerId` is the authenticated caller; the token must be its current claim ---
  started(workerId: number, jobId: string, body: z.output<typeof jobStartedSchema>): JobAck;
  output(workerId: number, jobId: string, body: z.output<typeof jobOutputSchema>): JobAck;
  /** The artifact must have been uploaded first (400 otherwise). */
  complete(workerId: number, jobId: string, body: z.output<typeof jobCompleteSchema>): JobAck;
  fail(workerId: number, jobId: string, body: z.output<typeof jobFailSchema>): JobAck;
  /**
   * Streams an upload into the artifact store: checks the claim before reading a byte (409), refuses more than
   * the size cap (413) or bytes whose sha256 is not `sha256` (400), keeping nothing in either case.
   */
  upload(workerId: number, jobId: string, claimToken: string, sha256: string, body: Readable, contentLength: number | null): Promise<StoredArtifact>;

  // --- the operator side ---
  /** The whole queue's counts and one page of it (the first DEFAULT_JOBS_PAGE_LIMIT jobs by default). */
  state(query?: JobsPageQuery): JobsState;
  /** Resolves once the manifest is in the queue; the work yields to the event loop between its steps. */
  submit(fileName: string, text: string): Promise<ManifestSubmitResult>;
  job(jobId: string): JobSnapshot;
  /** The job's kept output and when each of its lines was received. */
  jobOutput(jobId: string): TimedJobOutput;
  cancel(jobId: string): JobSnapshot;
  /** Deletes an ended job and its output (its artifact stays); 409 for a pending, claimed or running one. */
  deleteJob(jobId: string): { deleted: string };
  requeue(jobId: string): JobSnapshot;
  artifacts(): ArtifactSnapshot[];
  /** The stored tarball to stream out, or null (404); rejects with 422 one not safe to unpack (ArtifactStore.openInspected). */
  openArtifact(sha256: string): Promise<{ stream: Readable; sizeBytes: number } | null>;
  /** Artifact delete (404 unknown, 409 pinned) and the retention rule (artifact-housekeeping.ts). */
  readonly housekeeping: Pick<ArtifactHousekeeping, 'delete' | 'summary' | 'setRule'>;
}
