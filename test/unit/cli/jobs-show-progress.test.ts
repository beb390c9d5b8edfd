// Issue 25 item 7: `gpu-share jobs show` printed a job's raw GPU_SHARE_PROGRESS JSON as its "Last output" (three a
// step: nearly all of it); now those lines are left out (the job's progress line says the latest step), kept with
// --progress, and --json keeps the output whole. Served by a real HTTP server on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJobsPageQuery } from '../../../src-shared/jobs/jobs-page';
import type { JobsState } from '../../../src-shared/jobs/types';
import { startFakeOperator, type FakeOperator } from './fake-operator';
import { cli } from './helpers';
import { jobSnapshot } from './jobs-fixtures';

const JOB = jobSnapshot('chatty', { status: 'running', attempts: 1 });
const LOG = [
  'loading data\n',
  ...Array.from({ length: 30 }, (_, i) => `GPU_SHARE_PROGRESS {"step":${i},"total_steps":30,"loss":1.5}\n`),
  'saved checkpoint\n',
].join('');
let operator: FakeOperator;

beforeAll(async () => {
  operator = await startFakeOperator((url, send) => {
    if (url.pathname === '/v1/jobs') {
      const read = readJobsPageQuery(url.searchParams);
      if (!read.ok) return false;
      const state: JobsState = {
        jobs: [JOB],
        ledger: [],
        previews: [],
        counts: { total: 1, pending: 0, claimed: 0, running: 1, completed: 0, failed: 0, cancelled: 0 },
        placement: 'binpack',
        manifestName: null,
        page: { ...read.query, matching: 1 },
      };
      send(200, state);
    } else if (url.pathname === `/v1/jobs/${JOB.id}`) send(200, JOB);
    else if (url.pathname === `/v1/jobs/${JOB.id}/output`) send(200, { jobId: JOB.id, output: LOG });
    else return false;
    return true;
  });
});

afterAll(() => operator?.close());

describe('gpu-share jobs show: the output a person reads', () => {
  it('leaves progress lines out of "Last output", keeps them with --progress, and whole in --json', async () => {
    const plain = await cli(['jobs', 'show', 'chatty'], operator.env);
    expect(plain.code, plain.err).toBe(0);
    expect(plain.out).not.toContain('GPU_SHARE_PROGRESS');
    expect(plain.out).toMatch(/Last output\n\s*loading data\n\s*saved checkpoint\n?$/);
    const all = await cli(['jobs', 'show', 'chatty', '--progress', '--lines', '3'], operator.env);
    expect(all.out).toContain('GPU_SHARE_PROGRESS {"step":29');
    const json = JSON.parse((await cli(['jobs', 'show', 'chatty', '--json', '--lines', '100'], operator.env)).out) as { output: string };
    expect(json.output).toBe(LOG);
  });
});
