/**
 * The Jobs and Artifacts views' slice of the page state: the queue as the core last sent it, the artifacts,
 * what the person opened (expanded rows, outputs, a cancel being confirmed) and the last manifest's outcome.
 * Pure transitions first, then what the bridge subscribes and the commands the views call.
 */
import type { EventPayloads, GpuShareApi, RequestArg } from '../../../src-shared/ipc';
import { DEFAULT_JOBS_PAGE } from '../../../src-shared/jobs/jobs-page';
import type { ArtifactSnapshot, JobsPageQuery, JobsState, ManifestIssue, ManifestSubmitResult } from '../../../src-shared/jobs/types';
import type { FileLike } from '../../commands';
import { busyRequest } from '../../store/busy-request';
import { apply, messageOf, type AppStore } from '../../store/apply';
import type { AppState } from '../../store/state';


/** The manifest cap the contract allows; a larger file is refused here with its size instead of being sent. */
export const MAX_MANIFEST_FILE_BYTES = 4 * 1024 * 1024;

/** A manifest that was refused: its errors, shown until the next submit or a dismiss. */
export interface ManifestProblem {
  fileName: string;
  errors: ManifestIssue[];
}

export interface JobsSlice {
  /** Null until the first getJobs answer (or when the core has no job service). */
  state: JobsState | null;
  loadError: string | null;
  artifacts: ArtifactSnapshot[] | null;
  /** Job ids whose detail row (placement preview, output) is open. */
  expanded: string[];
  /** Output fetched on demand, by job id. */
  output: Record<string, string>;
  /** When each line of a fetched output was received (epoch ms, null where not recorded), by job id. */
  outputTimes: Record<string, (number | null)[]>;
  manifestProblem: ManifestProblem | null;
  /** What the last submit or reload did, in words. */
  notice: string | null;
  /** A cancel waiting for the person's confirmation. */
  cancelJobId: string | null;
}

export function initialJobsSlice(): JobsSlice {
  return { state: null, loadError: null, artifacts: null, expanded: [], output: {}, outputTimes: {}, manifestProblem: null, notice: null, cancelJobId: null };
}

function withJobs(s: AppState, patch: Partial<JobsSlice>): AppState {
  return { ...s, jobs: { ...s.jobs, ...patch } };
}

/** The core's whole JobsState replaces what the page had; rows of jobs that are gone close. */
export function setJobs(s: AppState, state: JobsState): AppState {
  const ids = new Set(state.jobs.map((j) => j.id));
  const expanded = s.jobs.expanded.filter((id) => ids.has(id));
  return withJobs(s, { state, loadError: null, expanded: expanded.length === s.jobs.expanded.length ? s.jobs.expanded : expanded });
}

export function jobsLoadFailed(s: AppState, message: string): AppState {
  return withJobs(s, { loadError: message });
}

export function setArtifacts(s: AppState, artifacts: ArtifactSnapshot[]): AppState {
  return withJobs(s, { artifacts: [...artifacts].sort((a, b) => b.createdAt - a.createdAt || (a.sha256 < b.sha256 ? -1 : 1)) });
}

export function toggleJobExpanded(s: AppState, jobId: string): AppState {
  const open = s.jobs.expanded.includes(jobId);
  return withJobs(s, { expanded: open ? s.jobs.expanded.filter((id) => id !== jobId) : [...s.jobs.expanded, jobId] });
}

/** A notification about a job was clicked: its row opens. */
export function expandJob(s: AppState, jobId: string): AppState {
  return s.jobs.expanded.includes(jobId) ? s : withJobs(s, { expanded: [...s.jobs.expanded, jobId] });
}

export function setJobOutput(s: AppState, jobId: string, text: string, times: (number | null)[] = []): AppState {
  return withJobs(s, { output: { ...s.jobs.output, [jobId]: text }, outputTimes: { ...s.jobs.outputTimes, [jobId]: times } });
}

export function askCancelJob(s: AppState, jobId: string): AppState {
  return withJobs(s, { cancelJobId: jobId });
}

export function closeCancelJob(s: AppState): AppState {
  return withJobs(s, { cancelJobId: null });
}

/** The page of the queue the view shows (what the core last sent; the first page before that). */
export function jobsPageOf(s: AppState): JobsPageQuery {
  const page = s.jobs.state?.page;
  return page ? { offset: page.offset, limit: page.limit, status: page.status } : DEFAULT_JOBS_PAGE;
}

/** Where the shown page sits in the queue: "201–400 of 10,000", and whether there are pages before and after it. */
export function jobsPagePosition(state: JobsState): { text: string; previous: boolean; next: boolean } | null {
  const page = state.page;
  if (!page || (page.offset === 0 && page.matching <= state.jobs.length)) return null;
  const first = Math.min(page.offset + 1, page.matching);
  const last = page.offset + state.jobs.length;
  const what = page.status ? `${page.status} jobs` : 'jobs';
  return { text: `${first.toLocaleString('en')}–${last.toLocaleString('en')} of ${page.matching.toLocaleString('en')} ${what}`, previous: page.offset > 0, next: last < page.matching };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The core answered a submit or reload: say what it did, or list every error (the queue is untouched then). */
export function manifestFinished(s: AppState, verb: 'Submitted' | 'Reloaded', result: ManifestSubmitResult): AppState {
  if (!result.ok) return withJobs(s, { manifestProblem: { fileName: result.fileName, errors: result.errors }, notice: null });
  const parts = [`${plural(result.added.length, 'new job')}`, `${result.kept.length} kept`];
  if (result.missing.length) parts.push(`${result.missing.length} no longer listed (kept until cancelled)`);
  return withJobs(s, { manifestProblem: null, notice: `${verb} ${result.fileName}: ${parts.join(', ')}.` });
}

/** A file refused before it reached the core (too large, unreadable). */
export function manifestRefused(s: AppState, fileName: string, message: string): AppState {
  return withJobs(s, { manifestProblem: { fileName, errors: [{ message, line: null, col: null, path: [] }] }, notice: null });
}

export function dismissManifestProblem(s: AppState): AppState {
  return withJobs(s, { manifestProblem: null });
}

export function dismissJobsNotice(s: AppState): AppState {
  return withJobs(s, { notice: null });
}

/** `file:line:col: message`, the form editors jump to; the place is left out when the parser did not know it. */
export function formatManifestIssue(fileName: string, issue: ManifestIssue): string {
  if (issue.line === null) return `${fileName}: ${issue.message}`;
  return `${fileName}:${issue.line}:${issue.col ?? 1}: ${issue.message}`;
}

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

const commandsByApi = new WeakMap<GpuShareApi, JobCommands>();

/** One set of job commands per API (views call this on each render). */
export function jobCommandsFor(api: GpuShareApi, store: AppStore): JobCommands {
  let commands = commandsByApi.get(api);
  if (!commands) {
    commands = createJobCommands(api, store);
    commandsByApi.set(api, commands);
  }
  return commands;
}
