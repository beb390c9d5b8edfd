// Issue 25 item 5, the server's half: the page token in an address is exchanged for an HttpOnly, SameSite=Strict
// cookie named for this port; the cookie lets the page's socket in only from this server's own Origin (required,
// not just checked), allows nothing the token does not, and dies with the token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { cookieValues, pageCookieName, pageCookieValue } from '../../../src-main/headless/page-cookie';
import { startHeadlessServer, type HeadlessServer } from '../../../src-main/headless/headless-server';
import { makeCoreFixture, type CoreFixture } from './helpers';

let fx: CoreFixture;
let server: HeadlessServer;
const TOKEN = 'cookie-test-token-0123456789-abcdef';

beforeAll(async () => {
  fx = await makeCoreFixture();
  server = await startHeadlessServer(fx.core, { host: '127.0.0.1', port: 0, staticDir: fx.staticDir, token: TOKEN });
});

afterAll(async () => {
  await server?.close();
  await fx?.cleanup();
});

function open(headers: Record<string, string>, query = ''): Promise<WebSocket | number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws${query}`, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

/** The cookie the server set when the page was opened with the token: `name=value`. */
async function cookieFromPage(): Promise<string> {
  const response = await fetch(server.url);
  expect(response.status).toBe(200);
  const set = response.headers.get('set-cookie') ?? '';
  return set.split(';')[0]!;
}

describe('the page cookie', () => {
  it('is set, HttpOnly and SameSite=Strict for the whole origin, when the page is opened with the token', async () => {
    const response = await fetch(server.url);
    const set = response.headers.get('set-cookie') ?? '';
    expect(set).toMatch(new RegExp(`^${pageCookieName(server.port)}=[A-Za-z0-9_-]{43}; `));
    expect(set).toContain('HttpOnly');
    expect(set).toContain('SameSite=Strict');
    expect(set).toContain('Path=/');
    expect(set).not.toContain('Secure'); // plain http on loopback; page-tls covers https
    // It is not the token itself: pasted as one, it opens nothing.
    expect(set).not.toContain(TOKEN);
    // Without the token, or with a wrong one, no cookie.
    expect((await fetch(`http://127.0.0.1:${server.port}/`)).headers.get('set-cookie')).toBeNull();
    expect((await fetch(`http://127.0.0.1:${server.port}/?token=wrong`)).headers.get('set-cookie')).toBeNull();
  });

  it('answers the session check: signed in with the cookie, not without it or with a wrong one', async () => {
    const cookie = await cookieFromPage();
    const session = async (headers: Record<string, string>) => (await (await fetch(`http://127.0.0.1:${server.port}/session`, { headers })).json()) as unknown;
    expect(await session({ Cookie: cookie })).toEqual({ signedIn: true });
    expect(await session({})).toEqual({ signedIn: false });
    expect(await session({ Cookie: `${pageCookieName(server.port)}=${pageCookieValue('another-token')}` })).toEqual({ signedIn: false });
    // A cookie of the same value under another port's name (another serve on this host) does not count.
    expect(await session({ Cookie: cookie.replace(String(server.port), String(server.port + 1)) })).toEqual({ signedIn: false });
  });

  it("opens the socket with the cookie from this server's own Origin only; no Origin or another is refused", async () => {
    const cookie = await cookieFromPage();
    const own = `http://127.0.0.1:${server.port}`;
    const ok = await open({ Cookie: cookie, Origin: own });
    expect(ok).toBeInstanceOf(WebSocket);
    (ok as WebSocket).close();
    // A page of another port of this host is same-site for SameSite, so the Origin check is what stops it.
    expect(await open({ Cookie: cookie, Origin: `http://127.0.0.1:${server.port + 1}` })).toBe(403);
    expect(await open({ Cookie: cookie, Origin: 'http://evil.example' })).toBe(403);
    // Only a browser sends the cookie by itself, and a browser always sends Origin: none means not our page.
    expect(await open({ Cookie: cookie })).toBe(403);
    // No cookie and no token, or a wrong cookie: 401 as before.
    expect(await open({ Origin: own })).toBe(401);
    expect(await open({ Origin: own, Cookie: `${pageCookieName(server.port)}=nope` })).toBe(401);
    // The token still opens it without a cookie or Origin (the CLI-like clients and the tests use it).
    const withToken = await open({}, `?token=${TOKEN}`);
    expect(withToken).toBeInstanceOf(WebSocket);
    (withToken as WebSocket).close();
  });

  it('dies with the token: a server with another token refuses the old cookie', async () => {
    const cookie = await cookieFromPage();
    const other = await startHeadlessServer(fx.core, { host: '127.0.0.1', port: 0, staticDir: fx.staticDir, token: 'a-rotated-token-9876543210' });
    try {
      const renamed = cookie.replace(String(server.port), String(other.port));
      const response = await fetch(`http://127.0.0.1:${other.port}/session`, { headers: { Cookie: renamed } });
      expect(await response.json()).toEqual({ signedIn: false });
    } finally {
      await other.close();
    }
  });

  it('reads every cookie of a name from a Cookie header, and nothing from others', () => {
    expect(cookieValues('a=1; gpu-share-page-7420=x; b=2; gpu-share-page-7420=y', 'gpu-share-page-7420')).toEqual(['x', 'y']);
    expect(cookieValues('gpu-share-page-74200=x', 'gpu-share-page-7420')).toEqual([]);
    expect(cookieValues(undefined, 'a')).toEqual([]);
  });
});
