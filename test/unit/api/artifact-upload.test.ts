// Artifact uploads and downloads over the real HTTP API, into a real ArtifactStore: every attack is refused and
// leaves nothing behind in the store (temp files included) or outside it.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_HEADER } from '../../../src-shared/worker-protocol';
import { eventually, filesUnder, JOB, OPERATOR, request, sha256, startJobsApi, uploadHeaders, uploadPath, type JobsApi } from './jobs-port-fixture';
import { tarballOf } from '../jobs/hand-made-tar';

let t: JobsApi;
afterEach(async () => {
  await t?.close();
});

const storedName = (sha: string) => path.join('sha256', sha.slice(0, 2), `${sha}.tar.gz`);

async function upload(bytes: Buffer, opts: { sha?: string; token?: string | null; worker?: number; session?: string } = {}) {
  const w = t.workers[opts.worker ?? 0]!;
  const headers = uploadHeaders({ session: opts.session ?? w.session }, opts.token === undefined ? undefined : opts.token);
  const reply = await request(t.api, 'PUT', uploadPath(w.id, opts.sha ?? sha256(bytes)), { headers, body: bytes });
  return { status: reply.status, json: reply.body.length ? JSON.parse(reply.body.toString('utf8')) : null };
}

/** Sends raw bytes on a socket; resolves with what came back by the time the server closed it (or `waitMs`). */
function rawExchange(api: JobsApi['api'], payload: string, waitMs = 3000): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect(api.port, '127.0.0.1');
    let got = '';
    const done = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve(got);
    };
    const timer = setTimeout(done, waitMs);
    sock.on('data', (d) => (got += d.toString('latin1')));
    sock.on('close', done);
    sock.on('error', done);
    sock.write(payload);
  });
}

describe('artifact upload and download', () => {
  it('stores an upload under its hash, once for identical bytes, and downloads it byte for byte', async () => {
    t = await startJobsApi();
    const bytes = tarballOf(randomBytes(700_000));
    const sha = sha256(bytes);
    expect(await upload(bytes)).toEqual({ status: 201, json: { sha256: sha, sizeBytes: bytes.length, stored: 'new' } });
    expect(await upload(bytes)).toEqual({ status: 201, json: { sha256: sha, sizeBytes: bytes.length, stored: 'existing' } });
    expect(filesUnder(t.storeDir)).toEqual([storedName(sha)]);

    const download = await request(t.api, 'GET', `/v1/artifacts/${sha}`, { headers: { authorization: `Bearer ${OPERATOR}` } });
    expect(download.status).toBe(200);
    expect(download.headers['content-type']).toBe('application/gzip');
    expect(download.headers['content-length']).toBe(String(bytes.length));
    expect(download.headers['content-disposition']).toBe(`attachment; filename="${sha.slice(0, 12)}.tar.gz"`);
    expect(download.body.equals(bytes)).toBe(true);
    expect(sha256(download.body)).toBe(sha);
  });

  it('a download of an artifact that is not there is 404, and needs the operator token', async () => {
    t = await startJobsApi();
    const absent = sha256(Buffer.from('never uploaded'));
    const missing = await request(t.api, 'GET', `/v1/artifacts/${absent}`, { headers: { authorization: `Bearer ${OPERATOR}` } });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body.toString()).error).toContain(`no artifact ${absent}`);
    const bytes = tarballOf(randomBytes(1000));
    await upload(bytes);
    const asWorker = await request(t.api, 'GET', `/v1/artifacts/${sha256(bytes)}`, { headers: uploadHeaders(t.workers[0]!) });
    expect([401, 403]).toContain(asWorker.status);
    expect(asWorker.body.toString()).toMatch(/operator token|missing bearer token/);
  });

  it('refuses bytes that are not what the path announced (400), keeping nothing', async () => {
    t = await startJobsApi();
    const bytes = randomBytes(50_000);
    const announced = sha256(Buffer.from('the real tarball'));
    const r = await upload(bytes, { sha: announced });
    expect(r.status).toBe(400);
    expect(r.json.error).toContain(`not the ${announced} announced`);
    expect(filesUnder(t.storeDir)).toEqual([]);
  });

  it('refuses traversal and non-hex ids in the path (400/404) and writes nothing anywhere', async () => {
    t = await startJobsApi();
    const bytes = randomBytes(2000);
    const w = t.workers[0]!;
    const attempts: [string, number][] = [
      [`/v1/workers/${w.id}/jobs/${JOB}/artifact/..%2F..%2Fetc`, 400],
      [`/v1/workers/${w.id}/jobs/${JOB}/artifact/..%2F..%2F${'a'.repeat(58)}`, 400],
      [`/v1/workers/${w.id}/jobs/${JOB}/artifact/${'g'.repeat(64)}`, 400],
      [`/v1/workers/${w.id}/jobs/${JOB}/artifact/${sha256(bytes).toUpperCase()}`, 400],
      [`/v1/workers/${w.id}/jobs/..%2F..%2Fetc/artifact/${sha256(bytes)}`, 404],
      [`/v1/workers/${w.id}/jobs/${JOB.slice(0, 63)}Z/artifact/${sha256(bytes)}`, 404],
    ];
    for (const [urlPath, status] of attempts) {
      const r = await request(t.api, 'PUT', urlPath, { headers: uploadHeaders(w), body: bytes });
      expect(r.status, urlPath).toBe(status);
    }
    // A literal ../ is resolved as a URL path before routing: it lands on no endpoint at all.
    const literal = await rawExchange(t.api, `PUT /v1/workers/${w.id}/jobs/${JOB}/artifact/../../../../etc/x HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    expect(literal).toMatch(/^HTTP\/1\.1 404/);
    const download = await request(t.api, 'GET', '/v1/artifacts/..%2F..%2Fetc%2Fpasswd', { headers: { authorization: `Bearer ${OPERATOR}` } });
    expect(download.status).toBe(404);
    expect(filesUnder(t.root)).toEqual([]);
    expect(t.port.uploads).toEqual([]);
  });

  it('refuses an upload over the cap by its content-length (413) before reading the body', async () => {
    t = await startJobsApi({ maxBytes: 100_000 });
    const w = t.workers[0]!;
    const headers = Object.entries({ ...uploadHeaders(w), 'content-length': '100001' })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    // Headers only: the answer must come without a byte of the body having been sent.
    const reply = await rawExchange(t.api, `PUT ${uploadPath(w.id, 'a'.repeat(64))} HTTP/1.1\r\nhost: x\r\n${headers}\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toContain('over the coordinator');
    expect(reply.toLowerCase()).toContain('connection: close');
    expect(filesUnder(t.storeDir)).toEqual([]);
  });

  it('refuses a chunked upload (no length) that grows past the cap (413) and removes its temp file', async () => {
    t = await startJobsApi({ maxBytes: 100_000 });
    const w = t.workers[0]!;
    const reply = await request(t.api, 'PUT', uploadPath(w.id, 'b'.repeat(64)), {
      headers: uploadHeaders(w),
      write: (req) => {
        for (let i = 0; i < 15; i++) req.write(randomBytes(10_000));
        req.end();
      },
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body.toString()).error).toContain('0.1 MiB limit');
    expect(filesUnder(t.storeDir)).toEqual([]);
  });

  it('refuses a wrong or missing session (401) and a foreign one, before the port sees the upload', async () => {
    t = await startJobsApi();
    const bytes = randomBytes(3000);
    expect((await upload(bytes, { session: 'x'.repeat(43) })).status).toBe(401);
    // Worker beta's own session is no good on alpha's path.
    const borrowed = await upload(bytes, { session: t.workers[1]!.session });
    expect(borrowed.status).toBe(401);
    expect(borrowed.json.error).toContain('wrong session');
    const bare = await request(t.api, 'PUT', uploadPath(t.workers[0]!.id, sha256(bytes)), { headers: {}, body: bytes });
    expect(bare.status).toBe(401);
    expect(bare.headers[SESSION_HEADER]).toBeUndefined();
    expect(t.port.uploads).toEqual([]);
    expect(filesUnder(t.storeDir)).toEqual([]);
  });

  it('passes the port\'s 409 for a claim token that is not the job\'s, and 400 for a missing or malformed one', async () => {
    t = await startJobsApi();
    const bytes = randomBytes(3000);
    const stale = await upload(bytes, { token: 'claimOLD01.1' });
    expect(stale.status).toBe(409);
    expect(stale.json.error).toContain('is not the current claim');
    const missing = await upload(bytes, { token: null });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toContain('missing claim token');
    expect((await upload(bytes, { token: '../../x' })).status).toBe(400);
    // The job's claim is worker alpha's: beta, with its own valid session and the right token, is refused too.
    expect((await upload(bytes, { worker: 1 })).status).toBe(409);
    expect(filesUnder(t.storeDir)).toEqual([]);
  });

  it('an upload refused before its body is read closes the connection at once instead of taking the rest', async () => {
    t = await startJobsApi();
    const w = t.workers[0]!;
    const headers = Object.entries({ ...uploadHeaders(w, 'claimOLD01.1'), 'content-length': '1000000' })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    const started = Date.now();
    const reply = await rawExchange(t.api, `PUT ${uploadPath(w.id, 'e'.repeat(64))} HTTP/1.1\r\nhost: x\r\n${headers}\r\n${'x'.repeat(1000)}`, 4000);
    expect(reply).toMatch(/^HTTP\/1\.1 409/);
    expect(reply.toLowerCase()).toContain('connection: close');
    expect(Date.now() - started).toBeLessThan(2000); // closed by the server, not by the test's wait
    expect(filesUnder(t.storeDir)).toEqual([]);
  });

  it('an upload whose client goes away midway leaves no temp file', async () => {
    t = await startJobsApi();
    const w = t.workers[0]!;
    const tempDir = path.join(t.storeDir, 'tmp');
    const gone = request(t.api, 'PUT', uploadPath(w.id, 'c'.repeat(64)), {
      headers: { ...uploadHeaders(w), 'content-length': '1000000' },
      write: (req) => {
        req.write(randomBytes(200_000));
        void eventually(() => fs.readdirSync(tempDir).length === 1).then(() => req.destroy());
      },
    });
    await expect(gone).rejects.toThrow();
    await eventually(() => t.port.uploads.length === 1);
    expect(t.port.uploads[0]!.settled).toBe('refused');
    expect(filesUnder(t.storeDir)).toEqual([]);
  });

  it('an upload that stalls is cut off after the body timeout and leaves no temp file', async () => {
    t = await startJobsApi({ http: { bodyTimeoutMs: 300 } });
    const w = t.workers[0]!;
    const reply = request(t.api, 'PUT', uploadPath(w.id, 'd'.repeat(64)), {
      headers: { ...uploadHeaders(w), 'content-length': '1000000' },
      write: (req) => req.write(randomBytes(10_000)),
    });
    await expect(reply).rejects.toThrow();
    await eventually(() => t.port.uploads.length === 1);
    expect(t.port.uploads[0]!.error).toContain('cut off');
    expect(filesUnder(t.storeDir)).toEqual([]);
  });

  it('an upload that keeps moving may take longer than any other request is given', async () => {
    // Other requests must be in within max(body, headers timeout) + 5 s = 5.6 s here.
    t = await startJobsApi({ http: { bodyTimeoutMs: 400, headersTimeoutMs: 600 } });
    const w = t.workers[0]!;
    const bytes = tarballOf(randomBytes(21 * 5_000));
    const parts = Array.from({ length: 21 }, (_, i) => bytes.subarray(Math.floor((i * bytes.length) / 21), Math.floor(((i + 1) * bytes.length) / 21)));
    const reply = await request(t.api, 'PUT', uploadPath(w.id, sha256(bytes)), {
      headers: { ...uploadHeaders(w), 'content-length': String(bytes.length) },
      write: (req) => {
        let i = 0;
        const next = () => {
          req.write(parts[i++]!);
          if (i < parts.length) setTimeout(next, 300);
          else req.end();
        };
        next();
      },
    });
    expect(reply.status, reply.body.toString()).toBe(201);
    expect(filesUnder(t.storeDir)).toEqual([storedName(sha256(bytes))]);
  }, 15_000);

  it('any other request whose body never finishes still has its connection closed at that deadline', async () => {
    t = await startJobsApi({ http: { bodyTimeoutMs: 400, headersTimeoutMs: 600 } });
    const started = Date.now();
    const reply = await rawExchange(t.api, `GET /v1/health HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n0123456789`, 12_000);
    expect(reply).toMatch(/^HTTP\/1\.1 200/); // answered at once, then held open by the unfinished body until 5.6 s
    expect(Date.now() - started).toBeGreaterThan(5000);
    expect(Date.now() - started).toBeLessThan(9000);
  }, 15_000);
});
