// The headless server with a real app core: static files and their headers, traversal refused, the token and
// origin checks on the WebSocket, requests and malformed messages, events pushed, clean shutdown.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { MAX_WS_MESSAGE_BYTES } from '../../../src-shared/headless-protocol';
import type { AppCore } from '../../../src-main/app/app-core-types';
import { HEADLESS_CSP } from '../../../src-main/app/static-content';
import { resolveStaticPath } from '../../../src-main/headless/static-files';
import { startHeadlessServer, type HeadlessServer } from '../../../src-main/headless/headless-server';
import { makeCoreFixture, SECRET, type CoreFixture } from './helpers';

let fx: CoreFixture;
let server: HeadlessServer;
let subscribed = 0;
const TOKEN = 'test-token-0123456789-abcdefghij';

beforeAll(async () => {
  fx = await makeCoreFixture();
  // The real core, with its subscribe counted so the test can see sockets unsubscribe when they close.
  const counted: AppCore = {
    ...fx.core,
    handlers: fx.core.handlers,
    subscribe(listener) {
      subscribed++;
      const off = fx.core.subscribe(listener);
      return () => {
        subscribed--;
        off();
      };
    },
    stop: () => fx.core.stop(),
  };
  server = await startHeadlessServer(counted, { host: '127.0.0.1', port: 0, staticDir: fx.staticDir, token: TOKEN });
});

afterAll(async () => {
  await server?.close();
  await fx?.cleanup();
});

/** Sends one raw HTTP request line, so paths reach the server exactly as written (no client normalisation). */
function rawGet(path: string, port = server.port): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`));
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (data += d));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0), head, body });
    });
  });
}

function wsUrl(token: string | null = TOKEN, path = '/ws'): string {
  return `ws://127.0.0.1:${server.port}${path}${token === null ? '' : `?token=${encodeURIComponent(token)}`}`;
}

/** Opens a socket; resolves with it, or with the HTTP status the upgrade was refused with. */
function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket | number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('error', (e) => reject(e));
  });
}

async function openOk(): Promise<WebSocket> {
  const ws = await open(wsUrl(), { Origin: `http://127.0.0.1:${server.port}` });
  if (typeof ws === 'number') throw new Error(`refused with ${ws}`);
  return ws;
}

/** Collects messages of a socket; next() waits for one matching. */
function inbox(ws: WebSocket) {
  const messages: Record<string, unknown>[] = [];
  const waiters: { match: (m: Record<string, unknown>) => boolean; resolve: (m: Record<string, unknown>) => void }[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as Record<string, unknown>;
    messages.push(m);
    for (const w of [...waiters]) {
      if (w.match(m)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  return {
    messages,
    next(match: (m: Record<string, unknown>) => boolean, timeoutMs = 5000): Promise<Record<string, unknown>> {
      const found = messages.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no matching message')), timeoutMs);
        waiters.push({ match, resolve: (m) => (clearTimeout(t), resolve(m)) });
      });
    },
  };
}

let nextId = 100;
async function request(ws: WebSocket, box: ReturnType<typeof inbox>, method: string, arg?: unknown) {
  const id = nextId++;
  ws.send(JSON.stringify({ id, method, arg }));
  return box.next((m) => m.id === id);
}

describe('static files', () => {
  it('serves index.html for / with the strict CSP and the other security headers', async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(HEADLESS_CSP);
    expect(HEADLESS_CSP).toContain("script-src 'self'");
    expect(HEADLESS_CSP).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(await res.text()).toContain('GPU Share test page');
  });

  it('sends each built file with its MIME type; hashed assets may be cached, the page may not', async () => {
    const js = await fetch(`http://127.0.0.1:${server.port}/assets/index-Ab12Cd34.js`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toContain('immutable');
    const css = await fetch(`http://127.0.0.1:${server.port}/assets/index-Ab12Cd34.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const weird = await fetch(`http://127.0.0.1:${server.port}/assets/notes.weird`);
    expect(weird.headers.get('content-type')).toBe('application/octet-stream');
    const index = await fetch(`http://127.0.0.1:${server.port}/index.html`);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const head = await fetch(`http://127.0.0.1:${server.port}/`, { method: 'HEAD' });
    expect(head.headers.get('content-length')).toBe(String('<!doctype html><title>GPU Share test page</title>'.length));
    expect(await head.text()).toBe('');
  });

  it('refuses every way out of the folder, symlinks and encodings included', async () => {
    const attempts = [
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/%2E%2E%2Fsecret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/assets/%2e%2e/%2e%2e/secret.txt',
      '/..%5csecret.txt',
      '/link-out.txt',
      '/assets',
      '/assets/',
      '/secret.txt%00.html',
      '/%E0%A4%A',
      '//etc/passwd',
      '/' + '../'.repeat(20) + 'etc/passwd',
    ];
    for (const p of attempts) {
      const res = await rawGet(p);
      expect([400, 404], `${p} → ${res.status}`).toContain(res.status);
      expect(res.body).not.toContain(SECRET);
      expect(res.body).not.toContain('root:');
      expect(res.head).toContain('Content-Security-Policy');
    }
  });

  it('resolveStaticPath maps only files inside the root', async () => {
    const root = (await import('node:fs')).realpathSync(fx.staticDir);
    expect(await resolveStaticPath(root, '/')).toEqual({ ok: true, filePath: `${root}/index.html` });
    expect(await resolveStaticPath(root, '/assets/../index.html')).toEqual({ ok: true, filePath: `${root}/index.html` });
    expect(await resolveStaticPath(root, '/link-out.txt')).toEqual({ ok: false, status: 404 });
    expect(await resolveStaticPath(root, '/a%ZZ')).toEqual({ ok: false, status: 400 });
  });

  it('answers only GET and HEAD', async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/`, { method: 'POST', body: 'x' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('WebSocket guard', () => {
  it('refuses a missing or wrong token with 401, and an unknown path with 404', async () => {
    expect(await open(wsUrl(null))).toBe(401);
    expect(await open(wsUrl('wrong'))).toBe(401);
    expect(await open(wsUrl(TOKEN.slice(0, -1)))).toBe(401);
    expect(await open(wsUrl(`${TOKEN}x`))).toBe(401);
    expect(await open(wsUrl(TOKEN, '/other'))).toBe(404);
  });

  it("refuses pages of other origins and DNS-rebinding Host names, accepts this server's own page", async () => {
    expect(await open(wsUrl(), { Origin: 'http://evil.example' })).toBe(403);
    expect(await open(wsUrl(), { Origin: `http://evil.example:${server.port}`, Host: `evil.example:${server.port}` })).toBe(403);
    expect(await open(wsUrl(), { Origin: `http://127.0.0.1:${server.port + 1}` })).toBe(403);
    const ok = await open(wsUrl(), { Origin: `http://localhost:${server.port}`, Host: `localhost:${server.port}` });
    expect(ok).toBeInstanceOf(WebSocket);
    (ok as WebSocket).close();
    const noOrigin = await open(wsUrl());
    expect(noOrigin).toBeInstanceOf(WebSocket);
    (noOrigin as WebSocket).close();
  });

  it('prints a URL that carries the token and opens the page', async () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${TOKEN}`);
    expect((await fetch(server.url)).status).toBe(200);
  });
});

describe('requests over the socket', () => {
  it('answers a request by id through the core, and refuses unknown methods and bad arguments with a message', async () => {
    const ws = await openOk();
    const box = inbox(ws);
    const cluster = await request(ws, box, 'getCluster');
    expect(cluster.ok).toBe(true);
    expect((cluster.result as { config: { nodes: unknown[] } }).config.nodes).toEqual([]);
    expect(await request(ws, box, 'rmRf', {})).toMatchObject({ ok: false, error: 'unknown request "rmRf"' });
    expect(await request(ws, box, 'removeNode', { name: '' })).toMatchObject({ ok: false, error: expect.stringMatching(/^removeNode: invalid argument at name: /) });
    expect(await request(ws, box, 'removeNode', { name: 'ghost' })).toMatchObject({ ok: false, error: 'there is no node named "ghost"' });
    expect(await request(ws, box, 'getCluster', { extra: 1 })).toMatchObject({ ok: false, error: expect.stringMatching(/^getCluster: invalid argument/) });
    ws.close();
  });

  it('answers malformed messages with an error and keeps the socket usable', async () => {
    const ws = await openOk();
    const box = inbox(ws);
    const cases: [string | Buffer, number | null, RegExp][] = [
      ['not json', null, /not JSON/],
      ['[1,2]', null, /JSON object/],
      ['null', null, /JSON object/],
      [JSON.stringify({ id: 'seven', method: 'getCluster' }), null, /"id", a whole number/],
      [JSON.stringify({ id: -1, method: 'getCluster' }), null, /"id", a whole number/],
      [JSON.stringify({ id: 7 }), 7, /needs "method"/],
      [JSON.stringify({ id: 8, method: 42 }), 8, /needs "method"/],
      [Buffer.from([1, 2, 3]), null, /binary messages/],
    ];
    for (const [payload, id, error] of cases) {
      const before = box.messages.length;
      ws.send(payload, { binary: Buffer.isBuffer(payload) });
      const reply = await box.next((m) => box.messages.indexOf(m) >= before && m.ok === false);
      expect(reply.id).toBe(id);
      expect(String(reply.error)).toMatch(error);
    }
    expect((await request(ws, box, 'getHardware')).ok).toBe(true);
    ws.close();
  });

  it('closes a socket that sends more than the size limit, and goes on serving others', async () => {
    const ws = await openOk();
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.send(JSON.stringify({ id: 1, method: 'importCluster', arg: { fileName: 'x', text: 'a'.repeat(MAX_WS_MESSAGE_BYTES), mode: 'replace' } }));
    expect(await closed).toBe(1009);
    const again = await openOk();
    const box = inbox(again);
    expect((await request(again, box, 'getCluster')).ok).toBe(true);
    again.close();
  });

  it('reports an invalid cluster.yaml with line:col and keeps the old cluster', async () => {
    const ws = await openOk();
    const box = inbox(ws);
    const reply = await request(ws, box, 'importCluster', { fileName: 'bad.yaml', text: 'nodes:\n  - name: a\n    host: h\n    max_adapters: 0\n', mode: 'replace' });
    const result = reply.result as { ok: boolean; errors: { message: string; line?: number; col?: number }[] };
    expect(result.ok).toBe(false);
    expect(result.errors[0]).toMatchObject({ message: "node 'a': max_adapters must be >= 1", line: 4 });
    const cluster = await request(ws, box, 'getCluster');
    expect((cluster.result as { config: { nodes: unknown[] } }).config.nodes).toEqual([]);
    ws.close();
  });
});

describe('events', () => {
  it('pushes core events to every open socket, and unsubscribes a socket when it closes', async () => {
    // Sockets of earlier tests were closed without waiting: let the server see those closes first.
    for (let i = 0; i < 200 && subscribed > 0; i++) await new Promise((r) => setTimeout(r, 10));
    const before = subscribed;
    expect(before).toBe(0);
    const a = await openOk();
    const b = await openOk();
    const boxA = inbox(a);
    const boxB = inbox(b);
    await request(a, boxA, 'getCluster'); // both sockets are subscribed once their first round trip is done
    await request(b, boxB, 'getCluster');
    expect(subscribed).toBe(before + 2);
    const added = await request(a, boxA, 'addThisMachine');
    expect(added.ok).toBe(true);
    const nodeName = (added.result as { nodeName: string }).nodeName;
    for (const box of [boxA, boxB]) {
      const ev = await box.next((m) => m.event === 'onCluster');
      expect((ev.payload as { config: { nodes: { name: string }[] } }).config.nodes.map((n) => n.name)).toContain(nodeName);
    }
    const closed = new Promise((r) => b.once('close', r));
    b.close();
    await closed;
    await new Promise((r) => setTimeout(r, 50));
    expect(subscribed).toBe(before + 1);
    a.close();
    await new Promise((r) => a.once('close', r));
    await new Promise((r) => setTimeout(r, 50));
    expect(subscribed).toBe(before);
  });
});

describe('shutdown', () => {
  it('close() says goodbye to open sockets and frees the port', async () => {
    const other = await startHeadlessServer(fx.core, { port: 0, staticDir: fx.staticDir });
    expect(other.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${other.port}/\\?token=[A-Za-z0-9_-]{43}$`));
    const ws = new WebSocket(`ws://127.0.0.1:${other.port}/ws?token=${other.token}`);
    await new Promise((r) => ws.once('open', r));
    const code = new Promise<number>((resolve) => ws.once('close', (c) => resolve(c)));
    await other.close();
    expect(await code).toBe(1001);
    await expect(fetch(`http://127.0.0.1:${other.port}/`)).rejects.toThrow();
  });
});
