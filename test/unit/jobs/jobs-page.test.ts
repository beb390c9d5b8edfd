// The paging contract of GET /v1/jobs (src-shared/jobs/jobs-page.ts): what a query string means, what is refused
// with which sentence, the query string a client sends (none for the default page, so an old coordinator sees
// the request it always did), and the clamp the IPC handler applies.
import { describe, expect, it } from 'vitest';
import { clampJobsPage, jobsPageSearch, readJobsPageQuery } from '../../../src-shared/jobs/jobs-page';

const read = (query: string) => readJobsPageQuery(new URLSearchParams(query));

describe('jobs paging', () => {
  it('reads offset, limit and status, each optional', () => {
    expect(read('')).toEqual({ ok: true, query: { offset: 0, limit: 200, status: null } });
    expect(read('offset=400&limit=1000&status=failed')).toEqual({ ok: true, query: { offset: 400, limit: 1000, status: 'failed' } });
    expect(read('limit=&status=')).toEqual({ ok: true, query: { offset: 0, limit: 200, status: null } });
  });

  it('refuses what is out of range or not a number, naming the parameter and what it may be', () => {
    expect(read('limit=1001')).toEqual({ ok: false, message: 'limit must be from 1 to 1000; got 1001' });
    expect(read('limit=0')).toEqual({ ok: false, message: 'limit must be from 1 to 1000; got 0' });
    expect(read('offset=-5')).toEqual({ ok: false, message: 'offset must be a whole number from 0 to 999999999; got "-5"' });
    expect(read('limit=1e3')).toMatchObject({ ok: false, message: expect.stringMatching(/^limit must be a whole number/) });
    expect(read('status=done')).toEqual({ ok: false, message: 'status must be one of pending, claimed, running, completed, failed, cancelled; got "done"' });
  });

  it('builds the query string a client sends, and clamps numbers from the page', () => {
    expect(jobsPageSearch()).toBe('');
    expect(jobsPageSearch({ offset: 0, limit: 200, status: null })).toBe('');
    expect(jobsPageSearch({ offset: 1000, limit: 1000, status: 'pending' })).toBe('?offset=1000&limit=1000&status=pending');
    for (const query of [{ offset: 1000, limit: 1000, status: 'pending' as const }, { offset: 7, limit: 5, status: null }]) {
      expect(read(jobsPageSearch(query).slice(1))).toEqual({ ok: true, query });
    }
    expect(clampJobsPage({ offset: -3, limit: 5000 })).toEqual({ offset: 0, limit: 1000, status: null });
    expect(clampJobsPage(undefined)).toEqual({ offset: 0, limit: 200, status: null });
  });
});
