/**
 * The coordinator API's adapter-job endpoints, handed to the job service (a JobsPort). The path's ids are
 * checked here before anything else sees them; the claim token, the queue and the artifact store are the
 * port's to check. A coordinator started without a job service answers 404 on all of them.
 */
import { CLAIM_TOKEN_HEADER, CLAIM_TOKEN_PATTERN, JOB_ID_PATTERN, SHA256_PATTERN } from '../../../src-shared/jobs/job-protocol';
import { readJobsPageQuery } from '../../../src-shared/jobs/jobs-page';
import { ApiProblem } from '../coordinator/common';
import type { JobsPort } from '../jobs/jobs-port';
import { workerIdParam, type Handlers } from './api-handlers';
import { contentLengthOf, watchUploadIdle } from './binary-transfer';

export type JobEndpointName =
  | 'jobStarted'
  | 'jobOutput'
  | 'jobComplete'
  | 'jobFail'
  | 'uploadArtifact'
  | 'jobsState'
  | 'submitManifest'
  | 'job'
  | 'jobLog'
  | 'cancelJob'
  | 'deleteJob'
  | 'requeueJob'
  | 'downloadArtifact'
  | 'deleteArtifact'
  | 'setArtifactRetention';

export interface JobRoutesOptions {
  /** An upload that sends nothing for this long (ms) is cut off. */
  uploadIdleMs: number;
}

/** A job id from the path (never decoded: a job id is plain hex, so anything encoded is not one). */
function jobIdParam(raw: string): string {
  if (!JOB_ID_PATTERN.test(raw)) throw new ApiProblem(404, `no job "${raw.slice(0, 80)}": job ids are 64 lowercase hex digits (see GET /v1/jobs)`);
  return raw;
}

function sha256Param(raw: string): string {
  if (!SHA256_PATTERN.test(raw)) throw new ApiProblem(400, `"${raw.slice(0, 80)}" is not an artifact id: the path ends with the tarball's sha256, 64 lowercase hex digits`);
  return raw;
}

function claimTokenHeader(header: string | string[] | undefined): string {
  if (typeof header !== 'string' || header === '') {
    throw new ApiProblem(400, `missing claim token: send the job's claim token (from its runJob instruction) in the ${CLAIM_TOKEN_HEADER} header`);
  }
  if (!CLAIM_TOKEN_PATTERN.test(header)) throw new ApiProblem(400, `the ${CLAIM_TOKEN_HEADER} header is not a claim token (<claimId>.<attempt>)`);
  return header;
}

export function jobHandlers(jobs: JobsPort | undefined, opts: JobRoutesOptions): Pick<Handlers, JobEndpointName> {
  const port = (): JobsPort => {
    if (!jobs) throw new ApiProblem(404, 'adapter jobs are not enabled on this coordinator');
    return jobs;
  };
  return {
    jobStarted: ({ params, body }) => port().started(workerIdParam(params[0]!), jobIdParam(params[1]!), body),
    jobOutput: ({ params, body }) => port().output(workerIdParam(params[0]!), jobIdParam(params[1]!), body),
    jobComplete: ({ params, body }) => port().complete(workerIdParam(params[0]!), jobIdParam(params[1]!), body),
    jobFail: ({ params, body }) => port().fail(workerIdParam(params[0]!), jobIdParam(params[1]!), body),
    uploadArtifact: ({ params, req }) => {
      const service = port();
      const workerId = workerIdParam(params[0]!);
      const jobId = jobIdParam(params[1]!);
      const sha256 = sha256Param(params[2]!);
      const token = claimTokenHeader(req.headers[CLAIM_TOKEN_HEADER]);
      watchUploadIdle(req, opts.uploadIdleMs);
      return service.upload(workerId, jobId, token, sha256, req, contentLengthOf(req));
    },
    jobsState: ({ req }) => {
      const read = readJobsPageQuery(new URL(req.url ?? '/', 'http://coordinator').searchParams);
      if (!read.ok) throw new ApiProblem(400, `GET /v1/jobs: ${read.message} (docs/api.md, "Paging the queue")`);
      return port().state(read.query);
    },
    submitManifest: ({ body }) => port().submit(body.fileName, body.text),
    job: ({ params }) => port().job(jobIdParam(params[0]!)),
    jobLog: ({ params }) => {
      const jobId = jobIdParam(params[0]!);
      const { text, times } = port().jobOutput(jobId);
      return { jobId, output: text, times };
    },
    cancelJob: ({ params }) => port().cancel(jobIdParam(params[0]!)),
    deleteJob: ({ params }) => port().deleteJob(jobIdParam(params[0]!)),
    requeueJob: ({ params }) => port().requeue(jobIdParam(params[0]!)),
    deleteArtifact: ({ params, body }) => port().housekeeping.delete(sha256Param(params[0]!), body.jobId),
    setArtifactRetention: ({ body }) => port().housekeeping.setRule(body),
    downloadArtifact: async ({ params }) => {
      const sha256 = sha256Param(params[0]!);
      const artifact = await port().openArtifact(sha256);
      if (!artifact) throw new ApiProblem(404, `no artifact ${sha256} on this coordinator (see GET /v1/artifacts)`);
      return { ...artifact, contentType: 'application/gzip', fileName: `${sha256.slice(0, 12)}.tar.gz` };
    },
  };
}
