/**
 * Which job a `gpu-share jobs …` argument means: a full id, a unique id prefix of at least 6 hex digits, or a
 * unique job name. Ambiguity is a usage error that names every candidate; nothing matching is "not found".
 */
import type { JobSnapshot } from '../../../../src-shared/jobs/types';
import { UsageError } from '../../command';
import type { OperatorClient } from '../../operator/operator-client';
import { EXIT, OperatorFailure } from '../../operator/operator-failure';
import { SHORT_ID, shortId } from './job-format';
import { allJobs } from './job-pages';

/** Fewest hex digits accepted as an id prefix: fewer would match by accident. */
export const MIN_PREFIX = 6;

export const LIST_HINT = 'jobs are listed by `gpu-share jobs list`';

export const JOB_ARGUMENT_USAGE = `JOB is the job's id, a unique prefix of it (at least ${MIN_PREFIX} hex digits, as \`jobs list\` shows), or
its name when no other job has it.`;

/** Every job `given` could mean (by full id, id prefix or name), each once, in the order of `jobs`. */
export function matchJobs(jobs: readonly JobSnapshot[], given: string): JobSnapshot[] {
  const exact = jobs.filter((j) => j.id === given);
  if (exact.length > 0) return exact;
  const prefix = given.length >= MIN_PREFIX && /^[0-9a-f]+$/.test(given);
  return jobs.filter((j) => j.name === given || (prefix && j.id.startsWith(given)));
}

function candidate(job: JobSnapshot): string {
  return `  ${shortId(job.id)}  ${job.name} (${job.status}${job.inManifest ? '' : ', no longer in the manifest'})`;
}

/** The one job `given` means, or a failure that says why there is none and what to type instead. */
export function selectJob(jobs: readonly JobSnapshot[], given: string): JobSnapshot {
  const matches = matchJobs(jobs, given);
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new UsageError(`"${given}" matches ${matches.length} jobs; give more of the id (the first ${SHORT_ID} digits are shown):\n${matches.map(candidate).join('\n')}`);
  }
  const short = /^[0-9a-f]+$/.test(given) && given.length < MIN_PREFIX ? ` (an id prefix needs at least ${MIN_PREFIX} hex digits)` : '';
  const none = jobs.length === 0 ? 'this coordinator has no jobs; submit a manifest with `gpu-share jobs submit FILE`' : LIST_HINT;
  throw new OperatorFailure(`no job "${given}" on this coordinator${short}; ${none}`, EXIT.notFound, 'not-found');
}

/** Reads the coordinator's jobs and picks the one `given` means. */
export async function fetchJob(client: OperatorClient, given: string): Promise<JobSnapshot> {
  return selectJob(await allJobs(client), given);
}
