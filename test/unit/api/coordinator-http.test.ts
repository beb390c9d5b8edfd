// The coordinator's HTTP API on a real server (127.0.0.1, port 0): the happy paths and every refusal.
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, startCoordinatorHttp, type CoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { generateToken, tokensEqual } from '../../../src-main/platform/tokens';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { apiPaths, heartbeatResponseSchema, joinResponseSchema, SESSION_HEADER, type JoinRequest } from '../../../src-shared/worker-protocol';
import { FakeClock } from '../coordinator/fake-clock';
import { joinProofHeaders } from './join-proof-client';

const JOIN = 'join-' + 'a'.repeat(20);
const OPERATOR = 'op-' + 'b'.repeat(20);

let clock: FakeClock;
let svc: CoordinatorService;
let api: CoordinatorHttp;
/** Session secrets from join answers, by worker id: call() sends the right one for /v1/workers/{id}/… paths. */
const sessions = new Map<number, string>();

beforeEach(async () => {
  sessions.clear();
  clock = new FakeClock();
  svc = new CoordinatorService({ clock, joinToken: JOIN, operatorToken: OPERATOR });
  api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR, bodyTimeoutMs: 400, headersTimeoutMs: 600 });
});

afterEach(async () => {
  await api.close();
});

function joinBody(node = 'desktop'): JoinRequest {
  return {
    node,
    agentVersion: '0.1.0',
    machineId: `machine-${node}`.padEnd(24, 'x'),
    gpus: [{ uuid: 'GPU-1', name: 'RTX 4090', vramTotalMb: 24564 }],
    cpuCores: 16,
    ramMb: 65536,
    advertiseHost: '127.0.0.1',
    rdzvPort: 29500,
    python: { path: '/usr/bin/python3', torchVersion: '1.13.1' },
  };
}

async function call(method: string, path: string, opts: { token?: string | null; body?: unknown; raw?: string; type?: string; session?: string | null } = {}) {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? JOIN : opts.token;
  // A join proves the token by its challenge (the token is never sent); other calls carry it as a bearer token.
  if (token !== null && path === apiPaths.join && method === 'POST') Object.assign(headers, await joinProofHeaders(api.url, token));
  else if (token !== null) headers.authorization = `Bearer ${token}`;
  const worker = /^\/v1\/workers\/(\d+)\//.exec(path);
  const session = opts.session === undefined ? (worker ? sessions.get(Number(worker[1])) : undefined) : opts.session;
  if (session) headers[SESSION_HEADER] = session;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] = opts.type ?? 'application/json';
  const res = await fetch(api.url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null };
}

/** The join proof's headers as raw header lines, for requests written by hand on a socket. */
async function proofLines(): Promise<string> {
  return Object.entries(await joinProofHeaders(api.url, JOIN))
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
}

/** Writes raw bytes on a socket and returns everything the server sends back until it closes (or timeout). */
function raw(payload: string | Buffer, opts: { waitMs?: number; keepOpen?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(api.port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => {
      sock.destroy();
      resolve(got);
    }, opts.waitMs ?? 2000);
    sock.on('data', (d) => (got += d.toString('latin1')));
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      if (got) resolve(got);
      else reject(e);
    });
    sock.write(payload);
  });
}

async function joined(node = 'desktop') {
  const r = await call('POST', apiPaths.join, { body: joinBody(node) });
  expect(r.status).toBe(200);
  const parsed = joinResponseSchema.parse(r.json);
  sessions.set(parsed.workerId, parsed.sessionSecret);
  return parsed;
}

describe('coordinator HTTP API — happy paths', () => {
  it('health is open and says the API version', async () => {
    const r = await call('GET', apiPaths.health, { token: null });
    expect(r).toMatchObject({ status: 200, json: { status: 'ok', apiVersion: 1 } });
    expect(api.url).toBe(`http://127.0.0.1:${api.port}`);
  });

  it('join → heartbeat → run start instruction → report → leave', async () => {
    const j = await joined();
    expect(j).toEqual({ sessionSecret: expect.any(String), workerId: 0, incarnation: 1, heartbeatIntervalMs: 1000, heartbeatTimeoutMs: 5000, epoch: svc.epoch, failoverGraceMs: 60_000 });
    expect(svc.workers()[0]).toMatchObject({ node: 'desktop', address: '127.0.0.1', local: false, state: 'syncing' });

    let hb = await call('POST', apiPaths.heartbeat(0), { body: { incarnation: 1 } });
    expect(hb.status).toBe(200);
    expect(heartbeatResponseSchema.parse(hb.json)).toEqual({ instructions: [], heartbeatTimeoutMs: 5000 });

    const started = await call('POST', apiPaths.runs, { token: OPERATOR, body: { name: 'demo', command: ['train.py'], samples: 1000 } });
    expect(started.status).toBe(201);
    expect(started.json).toMatchObject({ state: 'running', generation: 1, workerIds: [0], rdzvEndpoint: '127.0.0.1:29500' });
    const runId = started.json.id as string;

    hb = await call('POST', apiPaths.heartbeat(0), { body: { incarnation: 1, progress: null } });
    const parsed = heartbeatResponseSchema.parse(hb.json);
    expect(parsed.instructions).toHaveLength(1);
    expect(parsed.instructions[0]).toMatchObject({ kind: 'start', plan: { runId, generation: 1, env: { GPU_SHARE_SHARD_START: '0', GPU_SHARE_SHARD_END: '1000' } } });

    const rep = await call('POST', apiPaths.report(0), {
      body: { incarnation: 1, reports: [{ type: 'started', runId, generation: 1, pid: 4242 }, { type: 'output', runId, generation: 1, data: 'hello\n' }] },
    });
    expect(rep).toMatchObject({ status: 200, json: { ok: true } });
    // The coordinator's own [gpu-share] lines come first; the worker's output follows, prefixed with its node.
    expect(svc.runOutput(runId)).toMatch(/^\[desktop\] hello\n$/m);

    const left = await call('POST', apiPaths.leave(0), { body: { incarnation: 1, reason: 'agent shut down' } });
    expect(left.status).toBe(200);
    expect(svc.workers()[0]).toMatchObject({ state: 'left', stateCause: 'left: agent shut down' });
  });

  it('operator endpoints: state, runs, drain, stop', async () => {
    await joined('a');
    await call('POST', apiPaths.heartbeat(0), { body: { incarnation: 1 } });
    const run = await call('POST', apiPaths.runs, { token: OPERATOR, body: { command: ['t.py'], samples: 10 } });
    const state = await call('GET', apiPaths.state, { token: OPERATOR });
    expect(state.status).toBe(200);
    expect(state.json.workers).toHaveLength(1);
    expect(state.json.runs).toHaveLength(1);
    expect(state.json.events.length).toBeGreaterThan(0);
    const runs = await call('GET', apiPaths.runs, { token: OPERATOR });
    expect(runs.json.runs[0].id).toBe(run.json.id);
    const drained = await call('POST', apiPaths.drain(0), { token: OPERATOR });
    expect(drained.status).toBe(200);
    expect(drained.json.workers[0].state).toBe('draining');
    const stopped = await call('POST', apiPaths.stopRun(run.json.id), { token: OPERATOR });
    expect(stopped).toMatchObject({ status: 200, json: { state: 'stopped' } });
  });

  it('a bearer token is no join: neither the join token nor the operator token joins without the proof', async () => {
    for (const token of [JOIN, OPERATOR]) {
      const r = await fetch(api.url + apiPaths.join, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(joinBody()) });
      expect(r.status).toBe(401);
      expect(((await r.json()) as { error: string }).error).toMatch(/^a join must answer a challenge/);
    }
    expect(svc.workers()).toHaveLength(0);
  });
});

describe('coordinator HTTP API — refusals', () => {
  it('401 without a token, with a wrong token, and with the join token on an operator endpoint', async () => {
    const none = await call('POST', apiPaths.join, { token: null, body: joinBody() });
    expect(none.status).toBe(401);
    expect(none.json.error).toMatch(/^a join must answer a challenge/);
    const noneOperator = await call('GET', apiPaths.state, { token: null });
    expect(noneOperator.status).toBe(401);
    expect(noneOperator.json.error).toMatch(/^missing bearer token/);
    expect(noneOperator.headers.get('www-authenticate')).toBe('Bearer');
    const wrong = await call('POST', apiPaths.join, { token: 'nope-not-the-token-xxxxxxxxx', body: joinBody() });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error).toMatch(/^a join must answer a challenge/);
    const joinOnOperator = await call('GET', apiPaths.state, { token: JOIN });
    expect(joinOnOperator.status).toBe(403);
    expect(joinOnOperator.json.error).toContain('operator token');
    const wrongOperator = await call('POST', apiPaths.runs, { token: 'x', body: { command: ['a'], samples: 1 } });
    expect(wrongOperator).toMatchObject({ status: 401, json: { error: 'wrong token' } });
    expect(svc.workers()).toHaveLength(0);
    expect(svc.runs()).toHaveLength(0);
  });

  it('404 for an unknown path, an unknown worker, a worker id that is not a number, an unknown run', async () => {
    expect((await call('GET', '/v2/everything')).status).toBe(404);
    expect((await call('GET', '/')).status).toBe(404);
    const w = await call('POST', apiPaths.heartbeat(17), { body: { incarnation: 1 } });
    expect(w.status).toBe(404);
    expect(w.json.error).toContain('join again');
    expect((await call('POST', '/v1/workers/abc/heartbeat', { body: { incarnation: 1 } })).status).toBe(404);
    expect((await call('POST', '/v1/workers/-1/heartbeat', { body: { incarnation: 1 } })).status).toBe(404);
    expect((await call('POST', '/v1/workers/99999999999999999999/heartbeat', { body: { incarnation: 1 } })).status).toBe(404);
    expect((await call('POST', apiPaths.stopRun('run-none'), { token: OPERATOR })).status).toBe(404);
    expect((await call('POST', '/v1/runs/%E0%A4%A/stop', { token: OPERATOR })).status).toBe(404);
    expect((await call('POST', apiPaths.drain(5), { token: OPERATOR })).status).toBe(404);
  });

  it('405 for a wrong method, naming the allowed one', async () => {
    const r = await call('GET', apiPaths.join);
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(r.json.error).toBe('GET is not allowed on /v1/join; use POST');
    expect((await call('DELETE', apiPaths.runs, { token: OPERATOR })).headers.get('allow')).toBe('GET, POST');
  });

  it('400 for a body that is not JSON, naming the problem', async () => {
    const r = await call('POST', apiPaths.join, { raw: '{"node": "desk' });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/^body is not valid JSON/);
    expect((await call('POST', apiPaths.join, { raw: '' })).status).toBe(400);
  });

  it('400 for a body that fails the schema, naming the field', async () => {
    const { node: _n, ...noNode } = joinBody();
    const r = await call('POST', apiPaths.join, { body: noNode });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/^invalid body for POST \/v1\/join: node: /);
    const port = await call('POST', apiPaths.join, { body: { ...joinBody(), rdzvPort: 70000 } });
    expect(port.json.error).toContain('rdzvPort:');
    const nested = await call('POST', apiPaths.join, { body: { ...joinBody(), gpus: [{ uuid: null, name: 'x', vramTotalMb: -5 }] } });
    expect(nested.json.error).toContain('gpus.0.vramTotalMb:');
    const spec = await call('POST', apiPaths.runs, { token: OPERATOR, body: { command: ['t.py'], samples: 10, minWorkers: 3, maxWorkers: 2 } });
    expect(spec.status).toBe(400);
    expect(spec.json.error).toContain('minWorkers: minWorkers must be <= maxWorkers');
    await joined();
    const report = await call('POST', apiPaths.report(0), { body: { incarnation: 1, reports: [{ type: 'teleport' }] } });
    expect(report.status).toBe(400);
    expect(report.json.error).toContain('reports.0.type');
  });

  it('400 for comm settings a run cannot train with (a period without local-sgd); powersgd on a CPU run is accepted', async () => {
    // Whether its members' torch runs PowerSGD on gloo is decided per generation (fp16 with the reason if not).
    const psgd = await call('POST', apiPaths.runs, { token: OPERATOR, body: { command: ['t.py'], samples: 10, comm: 'powersgd' } });
    expect(psgd.status, JSON.stringify(psgd.json)).toBe(201);
    expect(psgd.json.spec).toMatchObject({ comm: 'powersgd' });
    const period = await call('POST', apiPaths.runs, { token: OPERATOR, body: { command: ['t.py'], samples: 10, comm: 'fp16', localSgdPeriod: 8 } });
    expect(period.status).toBe(400);
    expect(period.json.error).toContain('localSgdPeriod: localSgdPeriod applies to comm local-sgd only (this run asks for comm fp16)');
    const huge = await call('POST', apiPaths.runs, { token: OPERATOR, body: { command: ['t.py'], samples: 10, comm: 'local-sgd', localSgdPeriod: 1e9 } });
    expect(huge.status).toBe(400);
    expect(huge.json.error).toContain('localSgdPeriod:');
    const ok = await call('POST', apiPaths.runs, { token: OPERATOR, body: { command: ['t.py'], samples: 10, comm: 'powersgd', useGpus: true } });
    expect(ok.status).toBe(201);
    expect(ok.json.spec).toMatchObject({ comm: 'powersgd' });
  });

  it('413 for a body over its cap, declared or streamed: 16 KiB for a join (before authentication), 1 MiB after', async () => {
    const big = JSON.stringify({ ...joinBody(), node: 'x'.repeat(MAX_BODY_BYTES) });
    const r = await call('POST', apiPaths.join, { raw: big });
    expect(r.status).toBe(413);
    expect(r.json.error).toBe(`join body of ${big.length} bytes is over the 16384-byte limit for a request before authentication`);
    const run = await call('POST', apiPaths.runs, { token: OPERATOR, raw: JSON.stringify({ command: ['t.py'], samples: 10, name: 'x'.repeat(MAX_BODY_BYTES) }) });
    expect(run.status).toBe(413);
    expect(run.json.error).toContain('1048576-byte limit');
    // chunked, no content-length: refused once the limit is crossed
    const head = `POST ${apiPaths.join} HTTP/1.1\r\nhost: x\r\n${await proofLines()}content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`;
    const chunk = 'a'.repeat(64 * 1024);
    const chunks = Array.from({ length: 20 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    const reply = await raw(head + chunks + '0\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(svc.workers()).toHaveLength(0);
  });

  it('415 for a body that is declared as something other than JSON', async () => {
    const r = await call('POST', apiPaths.join, { raw: JSON.stringify(joinBody()), type: 'text/plain' });
    expect(r.status).toBe(415);
    expect(r.json.error).toContain('application/json');
    const ok = await call('POST', apiPaths.join, { raw: JSON.stringify(joinBody()), type: 'application/json; charset=utf-8' });
    expect(ok.status).toBe(200);
  });

  it('409 for a stale incarnation; a run of max_workers 1 refuses no join; a second live run is taken (201)', async () => {
    await joined('a');
    await call('POST', apiPaths.heartbeat(0), { body: { incarnation: 1 } });
    const stale = await call('POST', apiPaths.heartbeat(0), { body: { incarnation: 7 } });
    expect(stale.status).toBe(409);
    expect(stale.json.error).toMatch(/^stale heartbeat: worker 0 \(a\) is at incarnation 1/);
    const staleReport = await call('POST', apiPaths.report(0), { body: { incarnation: 2, reports: [] } });
    expect(staleReport.status).toBe(409);
    const run = await call('POST', apiPaths.runs, { token: OPERATOR, body: { command: ['t.py'], samples: 10, maxWorkers: 1 } });
    expect(run.status).toBe(201);
    // A run's max_workers never closes the cluster (issue 15): b joins while the run of max_workers 1 is live.
    const more = await call('POST', apiPaths.join, { body: joinBody('b') });
    expect(more.status).toBe(200);
    expect(more.json).toMatchObject({ workerId: 1, incarnation: 1, heartbeatTimeoutMs: 5000 });
    // Several runs at once (issue 15): a second run is taken, and waits while the first holds the machines.
    const second = await call('POST', apiPaths.runs, { token: OPERATOR, body: { command: ['t.py'], samples: 10 } });
    expect(second.status).toBe(201);
    expect(second.json).toMatchObject({ state: 'waiting', generation: 0 });
    const inverted = await call('POST', apiPaths.runs, { token: OPERATOR, body: { command: ['t.py'], samples: 10, minWorkers: 3, maxWorkers: 2 } });
    expect(inverted.status).toBe(400);
    expect(inverted.json.error).toMatch(/minWorkers/);
  });

  it('408 and a closed connection for a body that stalls (slow loris)', async () => {
    const head = `POST ${apiPaths.join} HTTP/1.1\r\nhost: x\r\n${await proofLines()}content-type: application/json\r\ncontent-length: 500\r\n\r\n{"node":`;
    const started = Date.now();
    const reply = await raw(head, { waitMs: 5000 });
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('408 and a closed connection for headers that never finish', async () => {
    const started = Date.now();
    const reply = await raw(`POST ${apiPaths.join} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${JOIN}\r\nx-slow: `, { waitMs: 5000 });
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('garbage on the socket gets a 400 and the server carries on', async () => {
    const reply = await raw('\x00\x01\x02 NOT HTTP AT ALL\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    const bad = await raw('POST /v1/join HTTP/1.1\r\nhost: x\r\ncontent-length: abc\r\n\r\n');
    expect(bad).toMatch(/^HTTP\/1\.1 400/);
    const health = await call('GET', apiPaths.health, { token: null });
    expect(health.status).toBe(200);
  });

  it('many bad requests at once leave it answering good ones', async () => {
    const bad = Array.from({ length: 30 }, (_, i) =>
      i % 3 === 0
        ? call('POST', apiPaths.join, { raw: '[[[' })
        : i % 3 === 1
          ? call('POST', apiPaths.heartbeat(i), { body: { incarnation: 'x' } })
          : raw(`GET /v1/state HTTP/1.1\r\nhost: x\r\nauthorization: Bearer\r\n\r\n`, { waitMs: 300 }),
    );
    await Promise.all(bad);
    const j = await joined('after');
    expect(j.workerId).toBe(0);
  });
});

describe('tokens', () => {
  it('generateToken gives 43 base64url characters, different each time', () => {
    const a = generateToken();
    const b = generateToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
  });

  it('tokensEqual compares whole tokens, whatever their lengths', () => {
    const t = generateToken();
    expect(tokensEqual(t, t.slice())).toBe(true);
    expect(tokensEqual(t, t.slice(0, -1))).toBe(false);
    expect(tokensEqual(t, t + 'x')).toBe(false);
    expect(tokensEqual('', '')).toBe(true);
    expect(tokensEqual(t, '')).toBe(false);
  });
});
