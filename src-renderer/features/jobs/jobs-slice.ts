/**
 * The Jobs and Artifacts views' slice of the page state: the queue as the core last sent it, the artifacts,
 * what the person opened (expanded rows, outputs, a cancel being confirmed) and the last manifest's outcome.
 * Pure transitions over any state holding the slice; the bridge's event and the commands are in jobs-commands.ts.
 */
import { DEFAULT_JOBS_PAGE } from '../../../src-shared/jobs/jobs-page';
import type { ArtifactHousekeeping } from '../../../src-shared/jobs/artifact-retention';
import type { ArtifactSnapshot, JobsPageQuery, JobsState, ManifestIssue, ManifestSubmitResult } from '../../../src-shared/jobs/types';

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
  /** The artifact retention rule and what is kept under it (null until read). */
  housekeeping: ArtifactHousekeeping | null;
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
  return { state: null, loadError: null, artifacts: null, housekeeping: null, expanded: [], output: {}, outputTimes: {}, manifestProblem: null, notice: null, cancelJobId: null };
}

/** Any state that holds the jobs slice (AppState does); the slice's transitions keep the rest as it is. */
export interface JobsHolder {
  /** Adapter jobs, their artifacts and what the Jobs view has open. */
  jobs: JobsSlice;
}

function withJobs<S extends JobsHolder>(s: S, patch: Partial<JobsSlice>): S {
  return { ...s, jobs: { ...s.jobs, ...patch } };
}

/** The core's whole JobsState replaces what the page had; rows of jobs that are gone close. */
export function setJobs<S extends JobsHolder>(s: S, state: JobsState): S {
  const ids = new Set(state.jobs.map((j) => j.id));
  const expanded = s.jobs.expanded.filter((id) => ids.has(id));
  return withJobs(s, { state, loadError: null, expanded: expanded.length === s.jobs.expanded.length ? s.jobs.expanded : expanded });
}

export function jobsLoadFailed<S extends JobsHolder>(s: S, message: string): S {
  return withJobs(s, { loadError: message });
}

export function setArtifacts<S extends JobsHolder>(s: S, artifacts: ArtifactSnapshot[]): S {
  return withJobs(s, { artifacts: [...artifacts].sort((a, b) => b.createdAt - a.createdAt || (a.sha256 < b.sha256 ? -1 : 1)) });
}

export function setHousekeeping<S extends JobsHolder>(s: S, housekeeping: ArtifactHousekeeping): S {
  return withJobs(s, { housekeeping });
}

export function toggleJobExpanded<S extends JobsHolder>(s: S, jobId: string): S {
  const open = s.jobs.expanded.includes(jobId);
  return withJobs(s, { expanded: open ? s.jobs.expanded.filter((id) => id !== jobId) : [...s.jobs.expanded, jobId] });
}

/** A notification about a job was clicked: its row opens. */
export function expandJob<S extends JobsHolder>(s: S, jobId: string): S {
  return s.jobs.expanded.includes(jobId) ? s : withJobs(s, { expanded: [...s.jobs.expanded, jobId] });
}

export function setJobOutput<S extends JobsHolder>(s: S, jobId: string, text: string, times: (number | null)[] = []): S {
  return withJobs(s, { output: { ...s.jobs.output, [jobId]: text }, outputTimes: { ...s.jobs.outputTimes, [jobId]: times } });
}

export function askCancelJob<S extends JobsHolder>(s: S, jobId: string): S {
  return withJobs(s, { cancelJobId: jobId });
}

export function closeCancelJob<S extends JobsHolder>(s: S): S {
  return withJobs(s, { cancelJobId: null });
}

/** The page of the queue the view shows (what the core last sent; the first page before that). */
export function jobsPageOf(s: JobsHolder): JobsPageQuery {
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
export function manifestFinished<S extends JobsHolder>(s: S, verb: 'Submitted' | 'Reloaded', result: ManifestSubmitResult): S {
  if (!result.ok) return withJobs(s, { manifestProblem: { fileName: result.fileName, errors: result.errors }, notice: null });
  const parts = [`${plural(result.added.length, 'new job')}`, `${result.kept.length} kept`];
  if (result.missing.length) parts.push(`${result.missing.length} no longer listed (kept until cancelled)`);
  return withJobs(s, { manifestProblem: null, notice: `${verb} ${result.fileName}: ${parts.join(', ')}.` });
}

/** A file refused before it reached the core (too large, unreadable). */
export function manifestRefused<S extends JobsHolder>(s: S, fileName: string, message: string): S {
  return withJobs(s, { manifestProblem: { fileName, errors: [{ message, line: null, col: null, path: [] }] }, notice: null });
}

export function dismissManifestProblem<S extends JobsHolder>(s: S): S {
  return withJobs(s, { manifestProblem: null });
}

export function dismissJobsNotice<S extends JobsHolder>(s: S): S {
  return withJobs(s, { notice: null });
}

/** `file:line:col: message`, the form editors jump to; the place is left out when the parser did not know it. */
export function formatManifestIssue(fileName: string, issue: ManifestIssue): string {
  if (issue.line === null) return `${fileName}: ${issue.message}`;
  return `${fileName}:${issue.line}:${issue.col ?? 1}: ${issue.message}`;
}
