import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoordinatorClient, findFreePort, parseCoordinatorUrl, trustProblem } from '../../../src-main/agent/coordinator-client';

describe('parseCoordinatorUrl', () => {
  it('accepts http and https URLs with a host', () => {
    for (const ok of ['http://127.0.0.1:7421', 'https://coordinator.lan', 'http://[::1]:7421/']) {
      expect(parseCoordinatorUrl(ok).ok, ok).toBe(true);
    }
  });

  it('refuses anything else with a reason', () => {
    const cases: [string, RegExp][] = [
      ['127.0.0.1:7421', /uses 127\.0\.0\.1:\/\/|not a URL/],
      ['not a url', /is not a URL; expected something like https:\/\/192\.168\.1\.20:7421 \(or http:\/\/127\.0\.0\.1:7421 on this machine\)/],
      ['ftp://host:21', /uses ftp:\/\/; the coordinator speaks http:\/\/ or https:\/\/ only/],
      ['ws://host:7421', /uses ws:\/\//],
      ['http://user:pw@host:7421', /carries a user name or password/],
      ['http://host:7421/?token=x', /has a query or fragment/],
    ];
    for (const [raw, why] of cases) {
      const r = parseCoordinatorUrl(raw);
      expect(r.ok, raw).toBe(false);
      if (!r.ok) expect(r.message, raw).toMatch(why);
    }
  });
});

describe('CoordinatorClient', () => {
  let server: http.Server;
  let base: string;
  let lastAuth: string | undefined;
  let lastSession: string | string[] | undefined;
  let hits: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      lastAuth = req.headers.authorization;
      lastSession = req.headers['x-gpu-share-session'];
      hits.push(req.url ?? '');
      if (req.url === '/ok') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"hello":"there"}');
      } else if (req.url === '/bad-json') {
        res.writeHead(500);
        res.end('<html>proxy error</html>');
      } else if (req.url === '/html-200') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>captive portal</html>');
      } else if (req.url === '/redirect') {
        res.writeHead(302, { location: '/ok' });
        res.end();
      } else if (req.url === '/huge') {
        // 9 MiB of valid JSON, streamed without a length: the client must stop reading at 8 MiB.
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = 'x'.repeat(1024 * 1024);
        res.write('"');
        let sent = 0;
        const more = () => {
          while (sent < 9) {
            sent += 1;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end('"');
        };
        more();
      } else if (req.url === '/slow') {
        setTimeout(() => res.end('{}'), 2000).unref();
      } else {
        res.writeHead(409, { 'content-type': 'application/json' });
        res.end('{"error":"stale heartbeat"}');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('never sends the join token, and parses JSON replies', async () => {
    const c = new CoordinatorClient(base, 'tok-123');
    expect(await c.post('/ok', {})).toEqual({ kind: 'ok', status: 200, body: { hello: 'there' } });
    expect(lastAuth).toBeUndefined();
  });

  it('sends the session secret once it has one', async () => {
    const c = new CoordinatorClient(base, 'tok');
    await c.post('/ok', {});
    expect(lastSession).toBeUndefined();
    c.useSession('s3cr3t-session-value-xyz');
    await c.post('/ok', {});
    expect(lastSession).toBe('s3cr3t-session-value-xyz');
    expect(lastAuth).toBeUndefined();
  });

  it('a 200 that is not JSON, a redirect and an oversized answer are protocol failures, not successes', async () => {
    const c = new CoordinatorClient(base, 't');
    expect(await c.post('/html-200', {})).toEqual({ kind: 'protocol', status: 200, message: expect.stringContaining('not JSON ("<html>captive portal</html>")') });
    hits = [];
    expect(await c.post('/redirect', {})).toEqual({ kind: 'protocol', status: 302, message: expect.stringContaining('redirect (302 to /ok)') });
    expect(hits).toEqual(['/redirect']); // not followed
    const before = process.memoryUsage().arrayBuffers;
    expect(await c.post('/huge', {}, 10_000)).toEqual({ kind: 'protocol', status: 200, message: expect.stringContaining('more than 8 MiB') });
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
  });

  it("turns error replies into their status and the server's message", async () => {
    const c = new CoordinatorClient(base, 't');
    expect(await c.post('/stale', {})).toEqual({ kind: 'http-error', status: 409, message: 'stale heartbeat' });
    expect(await c.post('/bad-json', {})).toEqual({ kind: 'http-error', status: 500, message: '<html>proxy error</html>' });
  });

  it('reports a timeout and a closed port as network problems, never throwing', async () => {
    const c = new CoordinatorClient(base, 't');
    const slow = await c.post('/slow', {}, 100);
    expect(slow).toEqual({ kind: 'network', message: expect.stringMatching(/no answer from 127\.0\.0\.1:\d+ in time/) });
    const port = await findFreePort();
    const closed = new CoordinatorClient(`http://127.0.0.1:${port}`, 't');
    expect(await closed.post('/x', {})).toEqual({ kind: 'network', message: `nothing is listening at 127.0.0.1:${port} (connection refused)` });
    expect(await closed.localAddressTowards()).toEqual({ ok: false, message: `nothing is listening at 127.0.0.1:${port} (connection refused)` });
  });

  it('finds the local address that reaches the coordinator', async () => {
    expect(await new CoordinatorClient(base, 't').localAddressTowards()).toEqual({ ok: true, address: '127.0.0.1' });
  });
});

describe('trustProblem', () => {
  const fp = 'AB:'.repeat(31) + 'AB';
  it('wants a fingerprint for https and none for http', () => {
    expect(trustProblem(new URL('https://10.0.0.1:7421'), fp)).toBeNull();
    expect(trustProblem(new URL('http://127.0.0.1:7421'), undefined)).toBeNull();
    expect(trustProblem(new URL('https://10.0.0.1:7421'), undefined)).toMatch(/speaks https.*--cert-sha256 HEX, or GPU_SHARE_CERT_SHA256.*copy the whole join command/);
    expect(trustProblem(new URL('http://10.0.0.1:7421'), fp)).toMatch(/plain http, where the join token would travel unencrypted/);
    expect(trustProblem(new URL('https://10.0.0.1:7421'), 'abc')).toMatch(/"abc" is not a SHA-256 certificate fingerprint/);
  });

  it('refuses plain http to a host that is not loopback, and such a client hands its transport nothing', async () => {
    for (const url of ['http://192.0.2.10:7421', 'http://gpu.example:7421', 'http://[fe80::1]:7421']) {
      expect(trustProblem(new URL(url), undefined), url).toMatch(/is plain http to a host other than this machine's loopback .* the join token would cross the network unencrypted; nothing was sent\. Use the https:\/\/ URL with --cert-sha256/);
    }
    expect(trustProblem(new URL('http://[::1]:7421'), undefined)).toBeNull();
    const sent: unknown[] = [];
    const c = new CoordinatorClient('http://192.0.2.10:7421', 't', {
      transport: (opts) => {
        sent.push(opts);
        return Promise.reject(new Error('must not be called'));
      },
    });
    expect(c.trustProblem()).toMatch(/^http:\/\/192\.0\.2\.10:7421 is plain http/);
    expect(await c.post('/v1/join', {})).toEqual({ kind: 'untrusted', message: expect.stringMatching(/plain http/) });
    expect(sent).toEqual([]);
  });

  it('an https client without a fingerprint sends nothing', async () => {
    const c = new CoordinatorClient('https://127.0.0.1:1', 't');
    expect(await c.post('/v1/join', {})).toEqual({ kind: 'untrusted', message: expect.stringMatching(/speaks https/) });
  });
});
