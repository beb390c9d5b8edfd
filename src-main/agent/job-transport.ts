/**
 * How the agent's adapter jobs reach the coordinator: the job calls (started, output, complete, fail) and the
 * artifact upload, each under the current join session — none while the agent is not joined.
 */
import type { EndpointBody } from '../../src-shared/worker-api';
import type { CoordinatorClient } from './coordinator-client';
import type { JobRunnerOptions } from './job-runner';

export function jobTransport(client: CoordinatorClient, joined: () => { workerId: number } | null): Pick<JobRunnerOptions, 'post' | 'upload'> {
  return {
    post: async (name, jobId, body) => {
      const session = joined();
      if (!session) return { kind: 'network', message: 'not joined to the coordinator' };
      // The job calls share one path shape (worker, job); TypeScript cannot see that through the union.
      return client.call(name as 'jobStarted', [session.workerId, jobId], body as EndpointBody<'jobStarted'>);
    },
    upload: async (jobId, sha256, file, sizeBytes, headers) => {
      const session = joined();
      if (!session) return { kind: 'network', message: 'not joined to the coordinator' };
      return client.upload('uploadArtifact', [session.workerId, jobId, sha256], { file, sizeBytes, contentType: 'application/gzip', headers });
    },
  };
}
