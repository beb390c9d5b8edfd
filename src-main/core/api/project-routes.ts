/**
 * The routes of a run's project and result: a worker fetches a snapshot's manifest and files, a member uploads
 * what rank 0 wrote, the operator downloads it. Contract in src-shared/worker-api.ts; the handlers answer 404
 * until the coordinator's project store is wired (issue 23).
 */
import { ApiProblem } from '../coordinator/api-problem';
import type { Handlers } from './api-handlers';

type ProjectHandlers = Pick<Handlers, 'projectManifest' | 'projectBlob' | 'uploadRunArtifact' | 'runArtifact'>;

export function projectHandlers(): ProjectHandlers {
  const missing = (): never => {
    throw new ApiProblem(404, 'this coordinator does not ship projects yet (issue 23: not wired)');
  };
  return { projectManifest: missing, projectBlob: missing, uploadRunArtifact: missing, runArtifact: missing };
}
