// `gpu-share jobs list` and the commands that pick a job against a coordinator that pages GET /v1/jobs (at most
// 1,000 jobs a reply, like the real one): list reads every page, --limit/--offset/--status ask for one, and a
// job far down a 2,500-job queue is still found by name. Served by a real HTTP server on 127.0.0.1.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJobsPageQuery } from '../../../src-shared/jobs/jobs-page';
import type { JobsState } from '../../../src-shared/jobs/types';
import { cli } from './helpers';
import { jobSnapshot } from './jobs-fixtures';

const OPERATOR = 'operator-token-operator-token-operator-to';
const QUEUE = Array.from({ length: 2500 }, (_, i) => jobSnapshot(`lora-${i}`, i % 5 === 0 ? { status: 'completed', attempts: 1 } : {}));
const asked: string[] = [];
let server: http.Server;
let root: string;
let env: NodeJS.ProcessEnv;

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const send = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (url.pathname === '/v1/jobs') {
    asked.push(url.search);
    const read = readJobsPageQuery(url.searchParams);
    if (!read.ok) return send(400, { error: read.message });
    const { offset, limit, status } = read.query;
    const matching = QUEUE.filter((j) => !status || j.status === status);
    const completed = QUEUE.filter((j) => j.status === 'completed').length;
    const state: JobsState = {
      jobs: matching.slice(offset, offset + limit),
      ledger: [],
      previews: [],
      counts: { total: QUEUE.length, pending: QUEUE.length - completed, claimed: 0, running: 0, completed, failed: 0, cancelled: 0 },
      placement: 'binpack',
      manifestName: null,
      page: { ...read.query, matching: matching.length },
    };
    return send(200, state);
  }
  const job = /^\/v1\/jobs\/([0-9a-f]{64})(\/output)?$/.exec(url.pathname);
  const found = job && QUEUE.find((j) => j.id === job[1]);
  if (found) return send(200, job[2] ? { jobId: found.id, output: 'hello\n' } : found);
  send(404, { error: `no endpoint ${url.pathname}` });
}

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'gpu-share-jobs-pages-'));
  server = http.createServer(route);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  env = { GPU_SHARE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, GPU_SHARE_OPERATOR_TOKEN: OPERATOR, GPU_SHARE_HOME: root };
});

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  rmSync(root, { recursive: true, force: true });
});

const listed = async (args: string[]) => {
  asked.length = 0;
  const r = await cli(['jobs', 'list', '--json', ...args], env);
  expect(r.err).toBe('');
  return (JSON.parse(r.out) as { name: string }[]).map((j) => j.name);
};

describe('gpu-share jobs against a paging coordinator', () => {
  it('list reads the whole queue, 1,000 jobs per request', async () => {
    const names = await listed([]);
    expect(names).toHaveLength(2500);
    expect(names.at(-1)).toBe('lora-2499');
    expect(asked).toEqual(['?limit=1000', '?offset=1000&limit=1000', '?offset=2000&limit=1000']);
  });

  it('--limit and --offset ask for one page; --status filters on the coordinator', async () => {
    expect(await listed(['--limit', '3', '--offset', '10'])).toEqual(['lora-10', 'lora-11', 'lora-12']);
    expect(asked).toEqual(['?offset=10&limit=3']);
    expect(await listed(['--status', 'completed', '--limit', '2'])).toEqual(['lora-0', 'lora-5']);
    expect((await listed(['--status', 'completed'])).length).toBe(500);
    const bad = await cli(['jobs', 'list', '--limit', '5000'], env);
    expect(bad).toMatchObject({ code: 2, err: expect.stringContaining('--limit must be between 1 and 1000, got 5000') });
  });

  it('jobs show finds a job on the third page by its name', async () => {
    const r = await cli(['jobs', 'show', 'lora-2401', '--json'], env);
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toMatchObject({ job: { name: 'lora-2401' }, output: 'hello\n' });
  });
});
