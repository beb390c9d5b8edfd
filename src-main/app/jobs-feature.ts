/**
 * Adapter jobs in the app: the job service on the state database and the artifact store in the data folder,
 * its IPC handlers, and its changes sent to the pages. app-core.ts builds it next to the coordinator.
 */
import path from 'node:path';
import type { ClusterConfig } from '../../src-shared/cluster/types';
import type { JobRequestResults } from '../../src-shared/jobs/ipc-jobs';
import { clampJobsPage, DEFAULT_JOBS_PAGE } from '../../src-shared/jobs/jobs-page';
import type { JobsPageQuery } from '../../src-shared/jobs/types';
import type { EmitEvent, RequestHandlers } from '../../src-shared/ipc';
import type { UserNotification } from '../../src-shared/training';
import { isApiProblem } from '../core/coordinator/common';
import type { CoordinatorService } from '../core/coordinator/service';
import { RequestError } from './ipc-dispatch';
import { ArtifactStore } from '../core/jobs/artifact-store';
import { JobService } from '../core/jobs/job-service';
import type { JobProjectStore } from '../core/jobs/job-project';
import type { StateDb } from '../core/state/state-db';
import { readRegularFile } from '../platform/files/safe-read';
import type { Clock } from '../platform/ports';

/** Largest artifact the page downloads over IPC/WebSocket; bigger ones go through `gpu-share jobs artifact`. */
const MAX_PAGE_DOWNLOAD_BYTES = 64 * 1024 * 1024;
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

type JobHandlers = Pick<RequestHandlers, keyof JobRequestResults>;

export interface JobsFeature {
  service: JobService;
  /** The artifact store (run outputs are kept there too, core/projects/run-projects.ts). */
  artifacts: ArtifactStore;
  handlers: JobHandlers;
  stop(): void;
}

export function createJobsFeature(opts: {
  userData: string;
  clock: Clock;
  db: StateDb;
  coordinator: CoordinatorService;
  cluster: () => ClusterConfig;
  announce: (n: UserNotification) => void;
  emit: EmitEvent;
  maxArtifactBytes?: number;
  /** Where a manifest's `project` is snapshotted (the runs' project store). */
  projects?: JobProjectStore;
}): JobsFeature {
  const artifacts = new ArtifactStore(path.join(opts.userData, 'artifacts'), opts.maxArtifactBytes === undefined ? {} : { maxBytes: opts.maxArtifactBytes });
  const service = new JobService({ clock: opts.clock, db: opts.db, artifacts, cluster: opts.cluster, coordinator: opts.coordinator, notify: opts.announce, event: (kind, severity, message, about) => opts.coordinator.recordEvent(kind, severity, message, about), ...(opts.projects ? { projects: opts.projects } : {}) });
  // The feed sends the page the view asked for last (the first page until it asks for another), never the whole queue.
  let feedPage: JobsPageQuery = DEFAULT_JOBS_PAGE;
  const unsubscribe = service.subscribe(
    (state) => opts.emit('onJobs', state),
    () => feedPage,
  );
  service.start();

  const handlers: JobHandlers = {
    getJobs: async (page) => {
      feedPage = clampJobsPage(page);
      return service.state(feedPage);
    },
    submitManifest: async ({ fileName, text }) => asRequestAsync(() => service.submit(fileName, text)),
    reloadManifest: async () => {
      const fileName = service.state().manifestName;
      if (!fileName) throw new RequestError('no manifest was submitted yet: drop one on the window or choose "Submit manifest…"');
      if (!path.isAbsolute(fileName)) throw new RequestError(`${fileName} was dropped on the window, so GPU Share cannot read it again by itself: drop the changed file again`);
      const read = await readRegularFile(fileName, { maxBytes: MAX_MANIFEST_BYTES, limitText: '4 MiB', expectation: 'a job manifest is a few KB' });
      if (!read.ok) throw new RequestError(read.failure.message);
      return asRequestAsync(() => service.submit(fileName, read.bytes.toString('utf8')));
    },
    cancelJob: async ({ jobId }) => asRequest(() => (service.cancel(jobId), service.state(feedPage))),
    requeueJob: async ({ jobId }) => asRequest(() => (service.requeue(jobId), service.state(feedPage))),
    deleteJob: async ({ jobId }) => asRequest(() => (service.deleteJob(jobId), service.state(feedPage))),
    getJobOutput: async ({ jobId }) => asRequest(() => ({ jobId, ...service.jobOutput(jobId) })),
    setPlacementPolicy: async ({ policy }) => ({ policy: service.setPolicy(policy) }),
    getArtifacts: async () => service.artifacts(),
    deleteArtifact: async ({ sha256 }) => asRequest(() => service.housekeeping.delete(sha256)),
    getArtifactHousekeeping: async () => service.housekeeping.summary(),
    setArtifactRetention: async (rule) => asRequest(() => service.housekeeping.setRule(rule)),
    getArtifact: async ({ sha256 }) => {
      const opened = await asRequestAsync(() => service.openArtifact(sha256));
      if (!opened) throw new RequestError(`no artifact ${sha256}`);
      if (opened.sizeBytes > MAX_PAGE_DOWNLOAD_BYTES) {
        opened.stream.destroy();
        throw new RequestError(`artifact ${sha256.slice(0, 12)} is ${(opened.sizeBytes / 1024 ** 2).toFixed(0)} MiB, too large for the window: run gpu-share jobs artifact ${sha256}`);
      }
      const chunks: Buffer[] = [];
      for await (const chunk of opened.stream) chunks.push(chunk as Buffer);
      const producer = service.artifacts().find((a) => a.sha256 === sha256)?.producedBy[0]?.jobName ?? 'artifact';
      return { fileName: `${producer.replace(/[^A-Za-z0-9._-]+/g, '_')}-${sha256.slice(0, 12)}.tar.gz`, base64: Buffer.concat(chunks).toString('base64') };
    },
  };

  return {
    service,
    artifacts,
    handlers,
    stop() {
      unsubscribe();
      service.stop();
    },
  };
}

/** asRequest for the service's asynchronous calls (a manifest is taken a step at a time). */
async function asRequestAsync<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (isApiProblem(error)) throw new RequestError(error.message);
    throw error;
  }
}

/** The service speaks HTTP statuses (ApiProblem); the page gets their message as it is. */
function asRequest<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (isApiProblem(error)) throw new RequestError(error.message);
    throw error;
  }
}
