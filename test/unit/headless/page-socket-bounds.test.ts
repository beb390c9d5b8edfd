// The page port under socket abuse (issue 14, item 5), over real sockets with short deadlines: header and request
// deadlines hold, dripping sockets are destroyed (not half-closed), connections per address are capped while
// another address is served, and an open WebSocket is not cut by the request deadline.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { AppCore } from '../../../src-main/app/app-core-types';
import { startHeadlessServer, type HeadlessServer, type HeadlessServerOptions } from '../../../src-main/headless/headless-server';
import { dripper, holdsWithin } from '../helpers/dripping-socket';

const TOKEN = 'page-token-' + 'c'.repeat(20);
/** The server touches only subscribe and handlers; no request here reaches a handler. */
const core = { subscribe: () => () => undefined, handlers: {} } as unknown as AppCore;

let dir = '';
let server: HeadlessServer | null = null;
const sockets: net.Socket[] = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-page-bounds-'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>page</title>');
});

afterEach(async () => {
  while (sockets.length) sockets.pop()!.destroy();
  await server?.close();
  server = null;
  rmSync(dir, { recursive: true, force: true });
});

async function start(extra: Partial<HeadlessServerOptions>): Promise<HeadlessServer> {
  server = await startHeadlessServer(core, { host: '127.0.0.1', port: 0, staticDir: dir, token: TOKEN, ...extra });
  return server;
}


function getPage(port: number, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', localAddress, agent: false, headers: { host: `127.0.0.1:${port}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

describe('page port socket bounds', () => {
  it('destroys 200 sockets that send a partial request and never read, within the header deadline + 1 s', async () => {
    const { port } = await start({ headersTimeoutMs: 500 });
    const started = Date.now();
    await Promise.all(Array.from({ length: 200 }, (_, i) => dripper(sockets, port, i % 2 ? 'GET / HTTP/1.1\r\nhost: x\r\nx-slow: ' : 'GET /ind', `127.0.0.${2 + (i % 10)}`)));
    expect(await holdsWithin(() => server!.openConnections() === 200, 400)).toBe(true);
    expect(await holdsWithin(() => server!.openConnections() === 0, 1_500 - (Date.now() - started))).toBe(true);
  });

  it('ends a request whose body drips past the request deadline', async () => {
    const { port } = await start({ headersTimeoutMs: 300, requestTimeoutMs: 800 });
    const sock = await dripper(sockets, port, 'POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n');
    const drip = setInterval(() => sock.write('x'), 100);
    try {
      expect(await holdsWithin(() => server!.openConnections() === 1, 300)).toBe(true);
      expect(await holdsWithin(() => server!.openConnections() === 0, 2_500)).toBe(true);
    } finally {
      clearInterval(drip);
    }
  });

  it('keeps an open WebSocket past the request deadline', async () => {
    const { port } = await start({ headersTimeoutMs: 300, requestTimeoutMs: 500 });
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${TOKEN}`);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(ws.readyState).toBe(WebSocket.OPEN);
    const answer = new Promise<string>((resolve) => ws.once('message', (d: Buffer) => resolve(d.toString())));
    ws.send('not json');
    expect(JSON.parse(await answer)).toMatchObject({ ok: false, error: expect.stringContaining('not JSON') });
    ws.close();
  });

  it('closes the 33rd concurrent socket of one address at once, while another address is still served', async () => {
    const { port } = await start({});
    await Promise.all(Array.from({ length: 32 }, () => dripper(sockets, port, null)));
    expect(await holdsWithin(() => server!.openConnections() === 32, 1_000)).toBe(true);
    const extra = await dripper(sockets, port, `GET / HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`);
    extra.resume();
    let got = '';
    extra.on('data', (d: Buffer) => (got += d.toString()));
    await new Promise((resolve) => extra.once('close', resolve));
    expect(got).toBe('');
    expect(await getPage(port, '127.0.0.2')).toBe(200);
  });

  it("with strangers holding every socket they may, still serves a fresh address (at the heaviest's expense) and loopback", async () => {
    const { port } = await start({ headersTimeoutMs: 20_000, connections: { perAddress: 4, perNetwork: 8, total: 16 }, alwaysServedFirst: (a) => a === '127.0.0.1' });
    for (const from of ['127.0.20.1', '127.0.20.2', '127.0.21.1', '127.0.21.2']) {
      await Promise.all(Array.from({ length: 4 }, () => dripper(sockets, port, null, from)));
    }
    // Strangers hold 12 of 16 (their three quarters); the rest are refused or take a heavier address's place.
    await holdsWithin(() => server!.openConnections() === 12, 1_000);
    expect(server!.openConnections()).toBe(12);
    expect(await getPage(port, '127.0.22.1')).toBe(200);
    expect(await getPage(port, '127.0.0.1')).toBe(200);
    await Promise.all(Array.from({ length: 4 }, () => dripper(sockets, port, null, '127.0.0.1')));
    // The fresh address's load closed one stranger's socket for good: 11 strangers and loopback's 4.
    await holdsWithin(() => server!.openConnections() === 15, 1_000);
    expect(server!.openConnections()).toBe(15);
  });

  it('destroys a refused upgrade even when the client never reads the refusal', async () => {
    const { port } = await start({});
    await dripper(sockets, port, `GET /ws?token=wrong HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-key: ${Buffer.alloc(16).toString('base64')}\r\nsec-websocket-version: 13\r\n\r\n`);
    expect(await holdsWithin(() => server!.openConnections() === 0, 1_500)).toBe(true);
  });
});
