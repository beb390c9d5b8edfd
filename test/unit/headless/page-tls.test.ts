// The page port beyond loopback (issue 14, "nothing secret in clear"): which binds need HTTPS, the page and its
// WebSocket served over TLS with the coordinator's own identity (checked by its pinned fingerprint, with the
// Origin check now wanting https://), a refusal to serve the token in clear, loopback still plain http, and
// `gpu-share serve` printing the https:// URL with the fingerprint to check.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { pinnedConnector } from '../../../src-main/platform/net/pinned-connection';
import type { AppCore } from '../../../src-main/app/app-core-types';
import { runServe } from '../../../src-main/cli/commands/serve';
import type { CliIo } from '../../../src-main/cli/command';
import { loadOrCreateTlsIdentity, type TlsIdentity } from '../../../src-main/platform/tls-identity';
import { originAllowed, pageNeedsTls, startHeadlessServer, type HeadlessServer } from '../../../src-main/headless/headless-server';

const TOKEN = 'page-token-' + 't'.repeat(24);
/** The server touches only subscribe and handlers; getCluster is the one request sent here. */
const core = {
  subscribe: () => () => undefined,
  handlers: { getCluster: () => Promise.resolve({ path: 'cluster.yaml', warnings: [] }) },
} as unknown as AppCore;

let dir = '';
let identity: TlsIdentity;
const servers: HeadlessServer[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-page-tls-'));
  mkdirSync(path.join(dir, 'static'));
  writeFileSync(path.join(dir, 'static', 'index.html'), '<!doctype html><title>tls page</title>');
  identity = await loadOrCreateTlsIdentity(path.join(dir, 'data'));
});

afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function start(opts: { tls?: TlsIdentity; host?: string }): Promise<HeadlessServer> {
  const server = await startHeadlessServer(core, { host: opts.host ?? '127.0.0.1', port: 0, staticDir: path.join(dir, 'static'), token: TOKEN, ...(opts.tls ? { tls: opts.tls } : {}) });
  servers.push(server);
  return server;
}

/** GET over TLS that trusts only the pinned fingerprint (as a worker does), nothing else. */
function pinnedGet(url: string, fingerprint: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { createConnection: pinnedConnector(fingerprint) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

/** Opens the page's socket; resolves with the first answer to getCluster, or the HTTP status it was refused with. */
function askOverSocket(url: string, opts: ConstructorParameters<typeof WebSocket>[2]): Promise<{ answer?: unknown; refused?: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, opts);
    ws.once('open', () => ws.send(JSON.stringify({ id: 1, method: 'getCluster' })));
    ws.once('message', (data: Buffer) => {
      resolve({ answer: JSON.parse(data.toString('utf8')) });
      ws.close();
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve({ refused: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

describe('pageNeedsTls', () => {
  it('wants HTTPS for every bind beyond loopback, and leaves loopback plain', () => {
    expect(['0.0.0.0', '::', '192.168.1.20', '', 'box.lan'].map(pageNeedsTls)).toEqual([true, true, true, true, true]);
    expect(['127.0.0.1', '127.3.2.1', '::1', '[::1]', 'localhost', 'LOCALHOST'].map(pageNeedsTls)).toEqual([false, false, false, false, false, false]);
  });
});

describe('the Origin check for a page bound beyond loopback', () => {
  it('wants https://<the Host asked for> from a page served over HTTPS on 0.0.0.0, and refuses http:// or another host', () => {
    const req = (origin: string) => ({ headers: { host: '192.168.1.20:7420', origin } }) as unknown as IncomingMessage;
    expect(originAllowed(req('https://192.168.1.20:7420'), '0.0.0.0', 7420, 'https')).toBe(true);
    expect(originAllowed(req('http://192.168.1.20:7420'), '0.0.0.0', 7420, 'https')).toBe(false);
    expect(originAllowed(req('https://evil.example'), '0.0.0.0', 7420, 'https')).toBe(false);
  });
});

describe('the page over HTTPS', () => {
  it('serves the page and its WebSocket over TLS with the coordinator identity, checked by its fingerprint', async () => {
    const server = await start({ tls: identity });
    expect(server.url).toBe(`https://127.0.0.1:${server.port}/?token=${TOKEN}`);
    expect(server.certSha256).toBe(identity.fingerprint256);

    const page = await pinnedGet(server.url, identity.fingerprint256);
    expect(page.status).toBe(200);
    expect(page.body).toContain('tls page');

    // The page's own socket: wss to the Host it was served from, Origin https://<that host>.
    const wss = `wss://127.0.0.1:${server.port}/ws?token=${TOKEN}`;
    const origin = `https://127.0.0.1:${server.port}`;
    const ok = await askOverSocket(wss, { createConnection: pinnedConnector(identity.fingerprint256), headers: { Origin: origin } });
    expect(ok.answer).toMatchObject({ id: 1, ok: true, result: { warnings: [] } });
  });

  it('keeps the token and Origin checks over TLS: a wrong token, or a page from http:// or elsewhere, is refused', async () => {
    const server = await start({ tls: identity });
    const connect = pinnedConnector(identity.fingerprint256);
    const base = `wss://127.0.0.1:${server.port}/ws`;
    expect(await askOverSocket(`${base}?token=wrong`, { createConnection: connect, headers: { Origin: `https://127.0.0.1:${server.port}` } })).toEqual({ refused: 401 });
    expect(await askOverSocket(`${base}?token=${TOKEN}`, { createConnection: connect, headers: { Origin: `http://127.0.0.1:${server.port}` } })).toEqual({ refused: 403 });
    expect(await askOverSocket(`${base}?token=${TOKEN}`, { createConnection: connect, headers: { Origin: 'https://evil.example' } })).toEqual({ refused: 403 });
  });

  it('says nothing in clear: a plain-http request gets no page, and a client pinning another certificate sends nothing', async () => {
    const server = await start({ tls: identity });
    await expect(fetch(`http://127.0.0.1:${server.port}/?token=${TOKEN}`)).rejects.toThrow();
    await expect(pinnedGet(server.url, 'ab'.repeat(32))).rejects.toThrow(/not the coordinator you were given/);
  });

  it('refuses to bind beyond loopback without a certificate, instead of serving the token in clear', async () => {
    // 192.0.2.1 is TEST-NET-1: the refusal comes before any bind is tried.
    await expect(start({ host: '192.0.2.1' })).rejects.toThrow(/would listen on 192\.0\.2\.1 in plain http.*bind it to 127\.0\.0\.1/);
  });

  it('stays plain http on loopback when no certificate is asked for', async () => {
    const server = await start({});
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${TOKEN}`);
    expect(server.certSha256).toBeNull();
    const page = await fetch(server.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('tls page');
  });
});

describe('gpu-share serve with the page over HTTPS', () => {
  it('prints the https:// URL, the certificate fingerprint (the coordinator identity) and what to check', async () => {
    const data = path.join(dir, 'serve-data');
    let out = '';
    let err = '';
    let poke = () => undefined as void;
    const io: CliIo = { out: (t) => ((out += t), poke()), err: (t) => ((err += t), poke()), env: { ...process.env, GPU_SHARE_STATIC_DIR: path.join(dir, 'static') }, cwd: dir };
    const stop = new AbortController();
    const done = runServe(
      { host: '127.0.0.1', port: 0, clusterPath: undefined, dataDir: data, coordinatorHost: '127.0.0.1', coordinatorPort: 0, localWorker: false, trustAdvertisedHosts: false, advertise: false, pageTls: true },
      io,
      stop.signal,
    );
    await new Promise<void>((resolve) => {
      poke = () => (/Press Ctrl\+C/.test(out) ? resolve() : undefined);
      poke();
    });
    const kept = await loadOrCreateTlsIdentity(data); // the one serve made and stored in its data folder
    const colons = (kept.fingerprint256.toUpperCase().match(/../g) ?? []).join(':');
    const url = /^GPU Share is running: (https:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43})$/m.exec(out)?.[1];
    expect(url).toBeDefined();
    expect(out).toContain(`The page's certificate is self-signed and names no address. SHA-256 fingerprint: ${colons}\n`);
    expect(out).not.toMatch(/From another machine/); // loopback: nobody else can open it
    expect(out).toMatch(/When the browser warns about it, open its certificate details and check that the SHA-256 fingerprint is exactly this one/);
    const page = await pinnedGet(url!, kept.fingerprint256);
    expect(page.status).toBe(200);
    stop.abort();
    expect(await done).toBe(0);
    expect(err).toBe('');
  });

  it('on --host 0.0.0.0 prints the URLs another machine would type: this machine\'s addresses, not 127.0.0.1', async () => {
    const data = path.join(dir, 'serve-wildcard');
    let out = '';
    let poke = () => undefined as void;
    const io: CliIo = { out: (t) => ((out += t), poke()), err: () => undefined, env: { ...process.env, GPU_SHARE_STATIC_DIR: path.join(dir, 'static') }, cwd: dir };
    const stop = new AbortController();
    const done = runServe(
      { host: '0.0.0.0', port: 0, clusterPath: undefined, dataDir: data, coordinatorHost: '127.0.0.1', coordinatorPort: 0, localWorker: false, trustAdvertisedHosts: false, advertise: false },
      io,
      stop.signal,
    );
    await new Promise<void>((resolve) => {
      poke = () => (/Press Ctrl\+C/.test(out) ? resolve() : undefined);
      poke();
    });
    stop.abort();
    expect(await done).toBe(0);
    const port = /^GPU Share is running: https:\/\/127\.0\.0\.1:(\d+)\//m.exec(out)?.[1];
    expect(port).toBeDefined();
    const token = /\?token=([A-Za-z0-9_-]{43})$/m.exec(out)?.[1];
    const ipv4 = Object.values(networkInterfaces()).flatMap((list) => list ?? []).filter((e) => e.family === 'IPv4' && !e.internal).map((e) => e.address);
    const printed = [...out.matchAll(/^From another machine, open: (\S+)$/gm)].map((m) => m[1]);
    expect(printed).toEqual(ipv4.map((a) => `https://${a}:${port}/?token=${token}`));
    if (ipv4.length === 0) expect(out).toMatch(/no network address besides loopback yet/);
    expect(out).not.toMatch(/From another machine, open: https:\/\/127\./);
    expect(out).toMatch(/self-signed and names no address\. SHA-256 fingerprint: ([0-9A-F]{2}:){31}[0-9A-F]{2}\n/);
  });
});
