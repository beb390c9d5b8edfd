// "Loopback" names a resolver answers (issue 26, item 5): only a literal loopback address, or the name `localhost`
// itself (resolved once and connected to only by a loopback address), may carry a token over plain http.
// `foo.localhost`, `localhost.` and names like 127.0.0.1.nip.io are the resolver's to answer, and a LAN resolver
// may answer 10.x: they need https with the pinned fingerprint like any other LAN URL.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import dns from 'node:dns';
import { afterEach, describe, expect, it } from 'vitest';
import { clearTextProblem } from '../../../src-shared/cluster/clear-text';
import { isLoopbackAddress } from '../../../src-shared/cluster/loopback';
import { ApiConnection } from '../../../src-main/platform/net/api-connection';

const ALLOWED = [
  'http://127.0.0.1:7421',
  'http://127.1:7421', // the URL parser writes 127.0.0.1
  'http://0x7f.1:7421', // likewise
  'http://2130706433:7421', // likewise
  'http://127.200.3.4:7421',
  'http://[::1]:7421',
  'http://[0:0:0:0:0:0:0:1]:7421',
  'http://[::ffff:127.0.0.1]:7421', // written [::ffff:7f00:1]
  'http://localhost:7421',
  'http://LOCALHOST:7421', // the parser lower-cases it
];
const REFUSED = [
  'http://foo.localhost:7421',
  'http://localhost.:7421',
  'http://LOCALHOST.:7421',
  'http://box.localhost.:7421',
  'http://127.0.0.1.nip.io:7421',
  'http://localhost.example:7421',
  'http://mylocalhost:7421',
  'http://[::ffff:10.0.0.1]:7421',
  'http://[::2]:7421',
];

describe('plain http: which URL forms may skip TLS', () => {
  it.each(ALLOWED)('%s may (a loopback address, or localhost itself)', (url) => {
    expect(clearTextProblem(url, 'operator')).toBeNull();
    expect(clearTextProblem(url, 'worker')).toBeNull();
  });

  it.each(REFUSED)('%s may not: a name the resolver answers, or not loopback', (url) => {
    expect(clearTextProblem(url, 'operator')).toMatch(/would cross the network unencrypted; nothing was sent/);
    expect(new ApiConnection(url, { bearerToken: 'operator-secret' }).trustProblem()).toMatch(/nothing was sent/);
  });

  it('a literal loopback address is only an address', () => {
    for (const a of ['127.0.0.1', '127.9.9.9', '::1', '[::1]', '::ffff:127.0.0.1', '::ffff:7f00:1']) expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of ['localhost', 'foo.localhost', 'localhost.', '10.0.0.1', '::ffff:a00:1', '127.0.0.1.nip.io']) expect(isLoopbackAddress(a), a).toBe(false);
  });
});

describe('http://localhost when the resolver answers elsewhere', () => {
  let server: Server | null = null;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  /** A resolver (the lookup hook, never real DNS) that maps localhost to `address`. */
  function mapping(address: string, family: 4 | 6, asked: string[]): typeof dns.lookup {
    return ((hostname: string, _options: unknown, callback: (e: null, a: { address: string; family: number }[]) => void) => {
      asked.push(hostname);
      callback(null, [{ address, family }]);
    }) as unknown as typeof dns.lookup;
  }

  it('never opens a connection, so the token is not sent in clear, and says why', async () => {
    const asked: string[] = [];
    // 192.0.2.1 (TEST-NET-1): never connected to, the lookup refuses first.
    const conn = new ApiConnection('http://localhost:7421', { bearerToken: 'operator-secret', resolve: mapping('192.0.2.1', 4, asked) });
    expect(conn.trustProblem()).toBeNull();
    const reply = await conn.request('GET', '/v1/state', undefined, 10_000, conn.authHeaders());
    expect(asked).toEqual(['localhost']);
    expect(reply.kind).not.toBe('ok');
    expect(JSON.stringify(reply)).toMatch(/localhost resolves to 192\.0\.2\.1, not to this machine's loopback/);
  });

  it('connects, and sends the token, when localhost resolves to loopback', async () => {
    let auth: string | undefined;
    server = createServer((req, res) => {
      auth = req.headers.authorization;
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const asked: string[] = [];
    const conn = new ApiConnection(`http://localhost:${port}`, { bearerToken: 'operator-secret', resolve: mapping('127.0.0.1', 4, asked) });
    const reply = await conn.request('GET', '/v1/state', undefined, 10_000, conn.authHeaders());
    expect(asked).toEqual(['localhost']);
    expect(reply.kind, JSON.stringify(reply)).toBe('ok');
    expect(auth).toBe('Bearer operator-secret');
  });
});
