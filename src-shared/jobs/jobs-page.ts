/**
 * Paging of the job queue, one contract for the coordinator (GET /v1/jobs?offset=&limit=&status=), the CLI and
 * the Jobs view: a 10,000-job queue is listed a page at a time, so no answer (nor IPC message) grows with the
 * queue. Pure: query strings in, a checked JobsPageQuery or the sentence that says what is wrong out.
 */
import type { JobsPageQuery, JobStatus } from './types';

/** Jobs per page when the query does not say. */
export const DEFAULT_JOBS_PAGE_LIMIT = 200;
/** Most jobs one page may ask for. */
export const MAX_JOBS_PAGE_LIMIT = 1000;
/** Pending jobs, in queue order, that one placement round looks at; those behind wait their turn unpreviewed. */
export const PLACEMENT_WINDOW = 256;

export const JOB_STATUS_NAMES: readonly JobStatus[] = ['pending', 'claimed', 'running', 'completed', 'failed', 'cancelled'];

export const DEFAULT_JOBS_PAGE: JobsPageQuery = { offset: 0, limit: DEFAULT_JOBS_PAGE_LIMIT, status: null };

type PageRead = { ok: true; query: JobsPageQuery } | { ok: false; message: string };

/** What is read of a query string: a URLSearchParams (this module stays free of any platform's types). */
export interface QueryParams {
  get(name: string): string | null;
}

function wholeNumber(raw: string | null, name: string, fallback: number, min: number, max: number): number | string {
  if (raw === null || raw === '') return fallback;
  if (!/^\d{1,9}$/.test(raw)) return `${name} must be a whole number from ${min} to ${max}; got "${raw.slice(0, 40)}"`;
  const n = Number(raw);
  if (n < min || n > max) return `${name} must be from ${min} to ${max}; got ${n}`;
  return n;
}

/** Reads ?offset=&limit=&status= (each optional) into a query, or says which one is wrong and what it may be. */
export function readJobsPageQuery(search: QueryParams): PageRead {
  const offset = wholeNumber(search.get('offset'), 'offset', 0, 0, 999_999_999);
  if (typeof offset === 'string') return { ok: false, message: offset };
  const limit = wholeNumber(search.get('limit'), 'limit', DEFAULT_JOBS_PAGE_LIMIT, 1, MAX_JOBS_PAGE_LIMIT);
  if (typeof limit === 'string') return { ok: false, message: limit };
  const rawStatus = search.get('status');
  if (rawStatus === null || rawStatus === '') return { ok: true, query: { offset, limit, status: null } };
  const status = JOB_STATUS_NAMES.find((s) => s === rawStatus);
  if (!status) return { ok: false, message: `status must be one of ${JOB_STATUS_NAMES.join(', ')}; got "${rawStatus.slice(0, 40)}"` };
  return { ok: true, query: { offset, limit, status } };
}

/** The query string for a page ('' for the default page, so old coordinators see the request they always did). */
export function jobsPageSearch(query: Partial<JobsPageQuery> = {}): string {
  // Whole numbers and a status name: nothing here needs percent-encoding.
  const parts: string[] = [];
  if (query.offset) parts.push(`offset=${Math.floor(query.offset)}`);
  if (query.limit !== undefined && query.limit !== DEFAULT_JOBS_PAGE_LIMIT) parts.push(`limit=${Math.floor(query.limit)}`);
  if (query.status) parts.push(`status=${query.status}`);
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/** A query clamped into range (for callers that hold numbers, not text: the IPC handler, the view's pager). */
export function clampJobsPage(query: Partial<JobsPageQuery> = {}): JobsPageQuery {
  const offset = Math.max(0, Math.floor(query.offset ?? 0));
  const limit = Math.min(MAX_JOBS_PAGE_LIMIT, Math.max(1, Math.floor(query.limit ?? DEFAULT_JOBS_PAGE_LIMIT)));
  return { offset: Number.isFinite(offset) ? offset : 0, limit: Number.isFinite(limit) ? limit : DEFAULT_JOBS_PAGE_LIMIT, status: query.status ?? null };
}
