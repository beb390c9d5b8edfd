/**
 * The routes of a run's project and result: a worker fetches a snapshot's manifest and files, a member uploads
 * what rank 0 wrote, the operator downloads it. Contract in src-shared/worker-api.ts. The worker's session is
 * checked by the server before a handler runs (the path's worker id is the caller); which snapshot and which
 * run it may reach is RunProjects' to say. A coordinator without a project store answers 404.
 */
import { SHA256_HEX_PATTERN } from '../../../src-shared/projects/project-protocol';
import type { ArtifactSnapshot } from '../../../src-shared/jobs/types';
import { ApiProblem } from '../coordinator/common';
import type { CoordinatorService } from '../coordinator/service';
import type { JobsPort } from '../jobs/jobs-port';
import type { RunProjects } from '../projects/run-projects';

export type { RunProjects };
import { runIdParam, workerIdParam, type Handlers } from './api-handlers';
import { contentLengthOf, watchUploadIdle } from './binary-transfer';

type ProjectHandlers = Pick<Handlers, 'projectManifest' | 'projectBlob' | 'uploadRunArtifact' | 'runArtifact'>;

function sha256Param(raw: string, what: string): string {
  if (!SHA256_HEX_PATTERN.test(raw)) throw new ApiProblem(400, `"${raw.slice(0, 80)}" is not ${what}: 64 lowercase hex digits`);
  return raw;
}

export function projectHandlers(projects: RunProjects | undefined, opts: { uploadIdleMs: number }): ProjectHandlers {
  const port = (): RunProjects => {
    if (!projects) throw new ApiProblem(404, 'this coordinator ships no projects (it was started without a project store)');
    return projects;
  };
  return {
    projectManifest: ({ params }) => port().manifestFor(workerIdParam(params[0]!), sha256Param(params[1]!, 'a snapshot hash')),
    projectBlob: ({ params }) => {
      const snapshot = sha256Param(params[1]!, 'a snapshot hash');
      const sha256 = sha256Param(params[2]!, "a file's sha256");
      const blob = port().blobFor(workerIdParam(params[0]!), snapshot, sha256);
      return { ...blob, contentType: 'application/octet-stream', fileName: sha256 };
    },
    uploadRunArtifact: ({ params, req }) => {
      const service = port();
      const workerId = workerIdParam(params[0]!);
      const runId = runIdParam(params[1]!);
      const sha256 = sha256Param(params[2]!, "an artifact id (the tarball's sha256)");
      watchUploadIdle(req, opts.uploadIdleMs);
      return service.uploadArtifact(workerId, runId, sha256, req, contentLengthOf(req));
    },
    runArtifact: async ({ params }) => {
      const opened = await port().openArtifact(runIdParam(params[0]!));
      return { stream: opened.stream, sizeBytes: opened.sizeBytes, contentType: 'application/gzip', fileName: opened.fileName };
    },
  };
}

/** The artifact list with the runs that produced each (GET /v1/artifacts, the Artifacts view). */
function withRunOrigins(list: ArtifactSnapshot[], projects: RunProjects | undefined): ArtifactSnapshot[] {
  if (!projects) return list;
  return list.map((a) => {
    const runs = projects.origins(a.sha256).map((o) => ({ runId: o.runId, runName: o.runName, partial: o.partial }));
    return runs.length > 0 ? { ...a, runs } : a;
  });
}

/** Run start (a project is snapshotted first) and the artifact list with run artifacts. */
export function runProjectHandlers(service: Pick<CoordinatorService, 'startRun'>, projects: RunProjects | undefined, jobs: JobsPort | undefined): Pick<Handlers, 'startRun' | 'listArtifacts'> {
  return {
    startRun: ({ body }) => {
      if (projects) return projects.startRun(body);
      if (body.project !== undefined) throw new ApiProblem(400, 'project: this coordinator ships no projects (it was started without a project store)');
      return service.startRun(body);
    },
    listArtifacts: () => {
      if (!jobs) throw new ApiProblem(404, 'adapter jobs are not enabled on this coordinator');
      return { artifacts: withRunOrigins(jobs.artifacts(), projects), housekeeping: jobs.housekeeping.summary() };
    },
  };
}
