/**
 * What the Jobs and Artifacts views ask of the core (submit, reload, cancel, delete, output, pages) and what the
 * bridge does with the jobs event: the I/O half of the jobs slice (jobs-slice.ts keeps the pure transitions, so the
 * store's state type can import the slice without a circle back through the store).
 */
import type { EventPayloads, GpuShareApi, RequestArg } from '../../../src-shared/ipc';
import type { JobsPageQuery } from '../../../src-shared/jobs/types';
import type { FileLike } from '../../commands';
import { busyRequest } from '../../store/busy-request';
import { apply, messageOf, type AppStore } from '../../store/apply';
import { MAX_MANIFEST_FILE_BYTES, setJobs, jobsLoadFailed, setArtifacts, setJobOutput, closeCancelJob, jobsPageOf, manifestFinished, manifestRefused } from './jobs-slice';
import { perApi } from '../../store/per-api';

/** What the bridge does with the jobs event (spread into its handlers). */
export function jobEventHandlers(store: AppStore): { onJobs: (state: EventPayloads['onJobs']) => void } {
  return { onJobs: (state) => apply(store, setJobs, state) };
}


/** Fetches the queue and the artifacts; at start, after a reconnect, and when a jobs view opens. Never throws. */
export async function loadJobs(api: GpuShareApi, store: AppStore): Promise<void> {
  try {
    const [state, artifacts] = await Promise.all([api.getJobs(jobsPageOf(store.getState())), api.getArtifacts()]);
    apply(store, setJobs, state);
    apply(store, setArtifacts, artifacts);
  } catch (error) {
    apply(store, jobsLoadFailed, `Could not load the jobs: ${messageOf(error)}`);
  }
}

/** Decodes the base64 an artifact travels in. */
export function base64Bytes(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export type JobCommands = ReturnType<typeof createJobCommands>;

export function createJobCommands(api: GpuShareApi, store: AppStore) {
  const attempt = <T>(busyName: string, failure: string, fn: () => Promise<T>) => busyRequest(store, busyName, failure, fn);

  async function refresh(page: JobsPageQuery = jobsPageOf(store.getState())): Promise<void> {
    const state = await attempt('jobs:load', 'Could not load the jobs', () => api.getJobs(page));
    if (state) apply(store, setJobs, state);
  }

  return {
    refresh,

    /** The previous (-1) or next (+1) page of the queue; the core's feed then sends that page. */
    async turnPage(direction: -1 | 1): Promise<void> {
      const page = jobsPageOf(store.getState());
      await refresh({ ...page, offset: Math.max(0, page.offset + direction * page.limit) });
    },

    /** A dropped or chosen .toml: refused if too large or unreadable, else submitted; errors are listed file:line:col. */
    async submitManifestFile(file: FileLike): Promise<void> {
      if (file.size > MAX_MANIFEST_FILE_BYTES) {
        const mib = (file.size / (1024 * 1024)).toFixed(1);
        apply(store, manifestRefused, file.name, `the file is ${mib} MiB; a manifest must be at most 4 MiB. Nothing was submitted.`);
        return;
      }
      let text: string;
      try {
        text = await file.text();
      } catch (error) {
        apply(store, manifestRefused, file.name, `the file could not be read (${messageOf(error)}). Nothing was submitted.`);
        return;
      }
      const result = await attempt('jobs:submit', `Could not submit ${file.name}`, () => api.submitManifest({ fileName: file.name, text }));
      if (!result) return;
      apply(store, manifestFinished, 'Submitted', result);
      if (result.ok) await refresh();
    },

    async reloadManifest(): Promise<void> {
      const result = await attempt('jobs:reload', 'Could not reload the manifest', () => api.reloadManifest());
      if (!result) return;
      apply(store, manifestFinished, 'Reloaded', result);
      if (result.ok) await refresh();
    },

    async cancelJob(jobId: string): Promise<void> {
      apply(store, closeCancelJob);
      const state = await attempt(`jobs:cancel:${jobId}`, 'Could not cancel the job', () => api.cancelJob({ jobId }));
      if (state) apply(store, setJobs, state);
    },

    async deleteJob(jobId: string): Promise<void> {
      const state = await attempt(`jobs:delete:${jobId}`, 'Could not delete the job', () => api.deleteJob({ jobId }));
      if (state) apply(store, setJobs, state);
    },

    async requeueJob(jobId: string): Promise<void> {
      const state = await attempt(`jobs:requeue:${jobId}`, 'Could not requeue the job', () => api.requeueJob({ jobId }));
      if (state) apply(store, setJobs, state);
    },

    async loadJobOutput(jobId: string): Promise<void> {
      const output = await attempt(`jobs:output:${jobId}`, 'Could not load the job output', () => api.getJobOutput({ jobId }));
      if (output) apply(store, setJobOutput, output.jobId, output.text, output.times);
    },

    async setPlacementPolicy(policy: RequestArg<'setPlacementPolicy'>['policy']): Promise<void> {
      const done = await attempt('jobs:placement', 'Could not change the placement policy', () => api.setPlacementPolicy({ policy }));
      if (done) await refresh();
    },

    async loadArtifacts(): Promise<void> {
      const artifacts = await attempt('artifacts:load', 'Could not list the artifacts', () => api.getArtifacts());
      if (artifacts) apply(store, setArtifacts, artifacts);
    },

    /** The artifact's bytes, for the page to save; undefined when it failed (the banner says why). */
    async fetchArtifact(sha256: string): Promise<Uint8Array | undefined> {
      const answer = await attempt(`artifacts:get:${sha256}`, `Could not download artifact ${sha256.slice(0, 12)}`, () => api.getArtifact({ sha256 }));
      return answer ? base64Bytes(answer.base64) : undefined;
    },
  };
}

/** One set of job commands per API (views call this on each render). */
export const jobCommandsFor = perApi(createJobCommands);
