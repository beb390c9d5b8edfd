// The job endpoints over the real HTTP API: each reaches the JobsPort with the caller's worker id and the path's
// job id, the port's refusals pass through, and auth is that of the runs' endpoints.
import { afterEach, describe, expect, it } from 'vitest';
import { apiPaths, SESSION_HEADER } from '../../../src-shared/worker-protocol';
import { JOB, JOIN, OPERATOR, OTHER_JOB, request, sha256, startJobsApi, TOKEN, uploadHeaders, uploadPath, type JobsApi } from './jobs-port-fixture';
import { handMadeTarGz, tarballOf } from '../jobs/hand-made-tar';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

let t: JobsApi;
afterEach(async () => {
  await t?.close();
});

async function call(method: string, urlPath: string, opts: { token?: string; session?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${opts.token ?? OPERATOR}` };
  if (opts.session) headers[SESSION_HEADER] = opts.session;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(t.api.url + urlPath, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const workerJob = (workerId: number, action: string, jobId = JOB) => `/v1/workers/${workerId}/jobs/${jobId}/${action}`;

describe('job routes: the worker side', () => {
  it('started, output, fail and complete reach the port with the caller and the job, and answer its ack', async () => {
    t = await startJobsApi();
    const alpha = t.workers[0]!;
    const as = { token: JOIN, session: alpha.session };
    expect(await call('POST', workerJob(alpha.id, 'started'), { ...as, body: { token: TOKEN, pid: 4242 } })).toEqual({ status: 200, json: { ok: true, status: 'running' } });
    expect((await call('POST', workerJob(alpha.id, 'output'), { ...as, body: { token: TOKEN, data: 'step 3' } })).status).toBe(200);
    expect((await call('POST', workerJob(alpha.id, 'fail'), { ...as, body: { token: TOKEN, exitCode: 1, signal: null, error: 'exited with code 1', outputTail: '' } })).json).toEqual({
      ok: true,
      status: 'failed',
    });
    // Complete needs the artifact uploaded first: the port's 400 passes through, then the upload makes it work.
    const bytes = tarballOf(Buffer.from('adapter'));
    const sha = sha256(bytes);
    const early = await call('POST', workerJob(alpha.id, 'complete'), { ...as, body: { token: TOKEN, artifactSha256: sha, sizeBytes: bytes.length } });
    expect(early).toEqual({ status: 400, json: { error: 'upload the artifact first', epoch: expect.any(String) } });
    expect((await request(t.api, 'PUT', uploadPath(alpha.id, sha), { headers: uploadHeaders(alpha), body: bytes })).status).toBe(201);
    expect((await call('POST', workerJob(alpha.id, 'complete'), { ...as, body: { token: TOKEN, artifactSha256: sha, sizeBytes: bytes.length } })).json.status).toBe('completed');
    expect(t.port.calls).toEqual([`started ${alpha.id} ${JOB} pid=4242`, `output ${alpha.id} ${JOB} step 3`, `fail ${alpha.id} ${JOB} exited with code 1`, `complete ${alpha.id} ${JOB} ${sha}`]);
  });

  it('a worker call needs that worker\'s own session; another worker with the token gets the port\'s 409', async () => {
    t = await startJobsApi();
    const [alpha, beta] = [t.workers[0]!, t.workers[1]!];
    const body = { token: TOKEN, pid: 1 };
    expect((await call('POST', workerJob(alpha.id, 'started'), { token: JOIN, body })).status).toBe(401);
    const borrowed = await call('POST', workerJob(alpha.id, 'started'), { token: JOIN, session: beta.session, body });
    expect(borrowed.status).toBe(401);
    expect(borrowed.json.error).toContain('wrong session');
    const foreign = await call('POST', workerJob(beta.id, 'started'), { token: JOIN, session: beta.session, body });
    expect(foreign.status).toBe(409);
    expect(foreign.json.error).toContain('not the current claim');
    const stale = await call('POST', workerJob(alpha.id, 'output'), { token: JOIN, session: alpha.session, body: { token: 'claimOLD01.2', data: 'x' } });
    expect(stale.status).toBe(409);
    expect(t.port.calls).toEqual([]);
  });

  it('a malformed body is 400 naming the field; a job id that is not 64 hex is 404', async () => {
    t = await startJobsApi();
    const alpha = t.workers[0]!;
    const bad = await call('POST', workerJob(alpha.id, 'started'), { token: JOIN, session: alpha.session, body: { token: 'no dots', pid: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain('token: a claim token is <claimId>.<attempt>');
    const notHex = await call('POST', workerJob(alpha.id, 'started', '..%2F..%2Fetc'), { token: JOIN, session: alpha.session, body: { token: TOKEN, pid: 1 } });
    expect(notHex.status).toBe(404);
    expect(notHex.json.error).toContain('job ids are 64 lowercase hex digits');
    expect(t.port.calls).toEqual([]);
  });
});

describe('job routes: the operator side', () => {
  it('state, submit, job, output, cancel, requeue and artifacts reach the port', async () => {
    t = await startJobsApi();
    const state = await call('GET', '/v1/jobs');
    expect(state.status).toBe(200);
    expect(state.json.jobs[0].id).toBe(JOB);
    const submitted = await call('POST', '/v1/jobs/manifest', { body: { fileName: '/tmp/sweep.toml', text: '[[jobs]]' } });
    expect(submitted).toEqual({ status: 200, json: { ok: true, fileName: '/tmp/sweep.toml', added: [JOB], kept: [], missing: [] } });
    expect((await call('GET', `/v1/jobs/${JOB}`)).json.status).toBe('running');
    expect((await call('GET', `/v1/jobs/${JOB}/output`)).json).toEqual({ jobId: JOB, output: 'step 1 loss 2.0\n', times: [null] });
    expect((await call('POST', `/v1/jobs/${JOB}/cancel`)).json.status).toBe('cancelled');
    expect((await call('POST', `/v1/jobs/${JOB}/requeue`)).json.status).toBe('pending');
    expect(await call('GET', '/v1/artifacts')).toEqual({ status: 200, json: { artifacts: [], housekeeping: { retention: { keepLast: null, maxTotalGb: null }, count: 0, totalBytes: 0 } } });
    const sha = 'c'.repeat(64);
    expect(await call('POST', `/v1/artifacts/${sha}/delete`, { body: { jobId: JOB } })).toEqual({ status: 200, json: { sha256: sha, removed: true, freedBytes: 0, stillUsedBy: 0 } });
    expect((await call('POST', `/v1/artifacts/${sha}/delete`, { body: { jobId: 'nope' } })).status).toBe(400);
    const rule = { keepLast: 3, maxTotalGb: null };
    expect(await call('POST', '/v1/artifacts/retention', { body: rule })).toEqual({ status: 200, json: { retention: rule, removed: [] } });
    const zero = await call('POST', '/v1/artifacts/retention', { body: { keepLast: 0, maxTotalGb: null } });
    expect(zero.status).toBe(400);
    expect(zero.json.error).toContain('keepLast is at least 1');
    expect(t.port.calls).toEqual(['submit /tmp/sweep.toml [[jobs]]', `cancel ${JOB}`, `requeue ${JOB}`, `delete artifact ${sha} of ${JOB}`]);
  });

  it('an unknown job is the port\'s 404; a malformed manifest body is 400', async () => {
    t = await startJobsApi();
    expect((await call('GET', `/v1/jobs/${OTHER_JOB}`)).status).toBe(404);
    expect((await call('POST', `/v1/jobs/${OTHER_JOB}/cancel`)).status).toBe(404);
    expect((await call('GET', '/v1/jobs/not-a-job/output')).status).toBe(404);
    const noName = await call('POST', '/v1/jobs/manifest', { body: { text: 'x' } });
    expect(noName.status).toBe(400);
    expect(noName.json.error).toContain('fileName');
    expect(t.port.calls).toEqual([]);
  });

  it('GET /v1/artifacts/SHA answers 422 naming the member for a stored tarball never inspected (put in the store by hand)', async () => {
    t = await startJobsApi();
    const bad = handMadeTarGz([{ path: '/etc/cron.d/x', body: '* * * * * root sh' }]);
    const id = sha256(bad);
    const file = path.join(t.port.store.dir, 'sha256', id.slice(0, 2), `${id}.tar.gz`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, bad);
    const r = await call('GET', `/v1/artifacts/${id}`);
    expect(r.status).toBe(422);
    expect(r.json.error).toContain(`the artifact's member "/etc/cron.d/x" has an absolute path`);
  });

  it('the join token alone is refused on every operator job route exactly as on the runs\' routes', async () => {
    t = await startJobsApi();
    const onRuns = await call('GET', apiPaths.runs, { token: JOIN });
    expect([401, 403]).toContain(onRuns.status);
    const routes: [string, string, unknown?][] = [
      ['GET', '/v1/jobs'],
      ['POST', '/v1/jobs/manifest', { fileName: 'a.toml', text: '' }],
      ['GET', `/v1/jobs/${JOB}`],
      ['GET', `/v1/jobs/${JOB}/output`],
      ['POST', `/v1/jobs/${JOB}/cancel`],
      ['POST', `/v1/jobs/${JOB}/requeue`],
      ['GET', '/v1/artifacts'],
      ['GET', `/v1/artifacts/${'a'.repeat(64)}`],
      ['POST', `/v1/artifacts/${'a'.repeat(64)}/delete`, {}],
      ['POST', '/v1/artifacts/retention', { keepLast: 1, maxTotalGb: null }],
    ];
    for (const [method, urlPath, body] of routes) {
      const r = await call(method, urlPath, { token: JOIN, ...(body !== undefined ? { body } : {}) });
      expect(r, `${method} ${urlPath}`).toEqual(onRuns);
    }
    expect(t.port.calls).toEqual([]);
  });
});

describe('job routes without a job service', () => {
  it('answer 404 "adapter jobs are not enabled", the worker side and uploads included', async () => {
    t = await startJobsApi({ jobs: false });
    const alpha = t.workers[0]!;
    const expected = { status: 404, json: { error: 'adapter jobs are not enabled on this coordinator', epoch: expect.any(String) } };
    expect(await call('GET', '/v1/jobs')).toEqual(expected);
    expect(await call('GET', '/v1/artifacts')).toEqual(expected);
    expect(await call('POST', `/v1/jobs/${JOB}/cancel`)).toEqual(expected);
    expect(await call('POST', workerJob(alpha.id, 'started'), { token: JOIN, session: alpha.session, body: { token: TOKEN, pid: 1 } })).toEqual(expected);
    const upload = await request(t.api, 'PUT', uploadPath(alpha.id, 'a'.repeat(64)), { headers: uploadHeaders(alpha), body: Buffer.alloc(10) });
    expect({ status: upload.status, json: JSON.parse(upload.body.toString()) }).toEqual(expected);
  });
});
