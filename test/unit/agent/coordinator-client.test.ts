import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoordinatorClient, findFreePort, parseCoordinatorUrl } from '../../../src-main/agent/coordinator-client';

describe('parseCoordinatorUrl', () => {
  it('accepts http and https URLs with a host', () => {
    for (const ok of ['http://127.0.0.1:7421', 'https://coordinator.lan', 'http://[::1]:7421/']) {
      expect(parseCoordinatorUrl(ok).ok, ok).toBe(true);
    }
  });

  it('refuses anything else with a reason', () => {
    const cases: [string, RegExp][] = [
      ['127.0.0.1:7421', /uses 127\.0\.0\.1:\/\/|not a URL/],
      ['not a url', /is not a URL; expected something like http:\/\//],
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

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      lastAuth = req.headers.authorization;
      if (req.url === '/ok') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"hello":"there"}');
      } else if (req.url === '/bad-json') {
        res.writeHead(500);
        res.end('<html>proxy error</html>');
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

  it('sends the token as a bearer token and parses JSON replies', async () => {
    const c = new CoordinatorClient(base, 'tok-123');
    expect(await c.post('/ok', {})).toEqual({ kind: 'ok', status: 200, body: { hello: 'there' } });
    expect(lastAuth).toBe('Bearer tok-123');
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
