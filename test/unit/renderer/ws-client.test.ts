// The page's WebSocket client against a real `ws` server on 127.0.0.1: ids, errors, timeouts, events, reconnects.
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import type { AddressInfo } from 'node:net';
import { events, requests } from '../../../src-shared/ipc';
import { backoffDelay, createWsClient, RequestFailed, type ConnectionState, type SocketLike } from '../../../src-renderer/api/ws-client';
import { webSocketUrlFor } from '../../../src-renderer/api/get-api';

type Reply = (msg: { id: number; method: string; arg?: unknown }, ws: WebSocket) => void;

interface TestServer {
  wss: WebSocketServer;
  url: string;
  port: number;
  connections: number;
  sockets: Set<WebSocket>;
  received: string[];
  close(): Promise<void>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function startServer(reply: Reply, port = 0): Promise<TestServer> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const actualPort = (wss.address() as AddressInfo).port;
  const server: TestServer = {
    wss,
    port: actualPort,
    url: `ws://127.0.0.1:${actualPort}/ws?token=t`,
    connections: 0,
    sockets: new Set(),
    received: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of server.sockets) s.terminate();
        wss.close(() => resolve());
      }),
  };
  wss.on('connection', (ws) => {
    server.connections++;
    server.sockets.add(ws);
    ws.on('close', () => server.sockets.delete(ws));
    ws.on('message', (data) => {
      const text = data.toString();
      server.received.push(text);
      reply(JSON.parse(text) as { id: number; method: string; arg?: unknown }, ws);
    });
  });
  cleanups.push(() => server.close());
  return server;
}

function client(url: string, extra: Partial<Parameters<typeof createWsClient>[0]> = {}) {
  const c = createWsClient({
    url,
    createSocket: (u) => new WebSocket(u) as unknown as SocketLike,
    initialBackoffMs: 20,
    maxBackoffMs: 100,
    ...extra,
  });
  cleanups.push(() => c.connection.close());
  return c;
}

function waitFor(state: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      if (state()) return resolve();
      if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(check, 5);
    };
    check();
  });
}

const echo: Reply = (msg, ws) => ws.send(JSON.stringify({ id: msg.id, ok: true, result: { method: msg.method, arg: msg.arg ?? null } }));

describe('createWsClient', () => {
  it('exposes exactly the contract: one method per request and one subscribe per event', () => {
    const { api } = client('ws://127.0.0.1:1/ws?token=t');
    expect(Object.keys(api).sort()).toEqual([...Object.keys(requests), ...Object.keys(events)].sort());
    for (const key of Object.keys(api)) expect(typeof (api as Record<string, unknown>)[key]).toBe('function');
  });

  it('matches answers to requests by id, even when the server answers out of order', async () => {
    const held: { msg: { id: number; method: string; arg?: unknown }; ws: WebSocket }[] = [];
    await startServer((msg, ws) => {
      held.push({ msg, ws });
      if (held.length === 3) for (const h of held.reverse()) echo(h.msg, h.ws);
    }).then(async (server) => {
      const { api } = client(server.url);
      const [a, b, c] = await Promise.all([api.getCluster(), api.removeNode({ name: 'jetson' }), api.stopRun({ runId: 'r-1' })]);
      expect(a).toEqual({ method: 'getCluster', arg: null });
      expect(b).toEqual({ method: 'removeNode', arg: { name: 'jetson' } });
      expect(c).toEqual({ method: 'stopRun', arg: { runId: 'r-1' } });
      const sent = server.received.map((t) => JSON.parse(t) as { id: number });
      expect(new Set(sent.map((m) => m.id)).size).toBe(3);
    });
  });

  it('rejects with the server error text, naming the method', async () => {
    const server = await startServer((msg, ws) => ws.send(JSON.stringify({ id: msg.id, ok: false, error: 'there is no node named "x"' })));
    const { api } = client(server.url);
    const error = await api.removeNode({ name: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestFailed);
    expect((error as RequestFailed).method).toBe('removeNode');
    expect((error as Error).message).toBe('there is no node named "x"');
  });

  it('times out a request the server never answers, with a message that says what to check', async () => {
    const server = await startServer(() => undefined);
    const { api } = client(server.url, { requestTimeoutMs: 150 });
    const started = Date.now();
    const error = (await api.getWorkers().catch((e: unknown) => e)) as Error;
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(error.message).toMatch(/^getWorkers: no answer from GPU Share within 0\.2 s — is `gpu-share serve` still running\?/);
  });

  it('delivers pushed events to subscribers until they unsubscribe, and ignores junk', async () => {
    let socket: WebSocket | null = null;
    const server = await startServer(echo);
    server.wss.on('connection', (ws) => (socket = ws));
    const { api, connection } = client(server.url);
    const seen: unknown[] = [];
    const off = api.onNotification((n) => seen.push(n));
    await waitFor(() => connection.current().status === 'open' && socket !== null, 'open');
    const note = { id: 'n1', title: 'Worker jetson failed', body: 'No heartbeat for 5 s.', severity: 'error' };
    socket!.send('not json {');
    socket!.send(JSON.stringify({ event: 'onNoSuchEvent', payload: 1 }));
    socket!.send(JSON.stringify({ event: 'onNotification', payload: note }));
    await waitFor(() => seen.length === 1, 'first event');
    expect(seen[0]).toEqual(note);
    off();
    socket!.send(JSON.stringify({ event: 'onNotification', payload: { ...note, id: 'n2' } }));
    // A request round trip after the second push proves the push was processed (same socket, in order).
    await api.getEvents();
    expect(seen).toHaveLength(1);
  });

  it('keeps other listeners going when one throws', async () => {
    let socket: WebSocket | null = null;
    const server = await startServer(echo);
    server.wss.on('connection', (ws) => (socket = ws));
    const { api, connection } = client(server.url);
    const seen: string[] = [];
    const original = console.error;
    console.error = () => undefined;
    cleanups.push(() => {
      console.error = original;
    });
    api.onFocus(() => {
      throw new Error('broken listener');
    });
    api.onFocus((t) => seen.push(t.view));
    await waitFor(() => connection.current().status === 'open' && socket !== null, 'open');
    socket!.send(JSON.stringify({ event: 'onFocus', payload: { view: 'workers', workerId: 2 } }));
    await waitFor(() => seen.length === 1, 'second listener');
    expect(seen).toEqual(['workers']);
  });

  it('reconnects with backoff after the server drops it: in-flight calls fail clearly, later calls work', async () => {
    let drop = true;
    const server = await startServer((msg, ws) => {
      if (drop && msg.method === 'getRuns') {
        drop = false;
        ws.terminate();
        return;
      }
      echo(msg, ws);
    });
    const { api, connection } = client(server.url);
    const states: ConnectionState[] = [];
    connection.onChange((s) => states.push(s));
    const lost = (await api.getRuns().catch((e: unknown) => e)) as Error;
    expect(lost.message).toMatch(/^getRuns: the connection to GPU Share was lost before it answered/);
    await waitFor(() => connection.current().status === 'open' && connection.current().opens === 2, 'reopen');
    expect(states.some((s) => s.status === 'reconnecting' && s.attempt === 1 && s.retryInMs !== null)).toBe(true);
    expect(await api.getRuns()).toEqual({ method: 'getRuns', arg: null });
    expect(server.connections).toBe(2);
  });

  it('queues calls made while the server is down and sends them once it is back', async () => {
    const first = await startServer(echo);
    const port = first.port;
    const { api, connection } = client(first.url, { requestTimeoutMs: 10_000 });
    await waitFor(() => connection.current().status === 'open', 'first open');
    await first.close();
    await waitFor(() => connection.current().status === 'reconnecting', 'reconnecting');
    const pending = api.getCoordinatorInfo();
    await new Promise((r) => setTimeout(r, 120));
    await startServer(echo, port);
    expect(await pending).toEqual({ method: 'getCoordinatorInfo', arg: null });
  });

  it('close() rejects what is pending and stops reconnecting', async () => {
    const server = await startServer(() => undefined);
    const { api, connection } = client(server.url);
    const pending = api.getHardware();
    await waitFor(() => server.received.length === 1, 'request sent');
    connection.close();
    await expect(pending).rejects.toThrow('getHardware: the connection to GPU Share is closed');
    expect(connection.current().status).toBe('closed');
    await new Promise((r) => setTimeout(r, 150));
    expect(server.connections).toBe(1);
  });
});

describe('backoffDelay', () => {
  it('doubles from the first delay up to the cap, spread by the jitter', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 9].map((a) => backoffDelay(a, 250, 5000, 0.2, mid))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
    expect(backoffDelay(3, 250, 5000, 0.2, () => 0)).toBe(800);
    expect(backoffDelay(3, 250, 5000, 0.2, () => 0.999999)).toBe(1200);
  });
});

describe('webSocketUrlFor', () => {
  it('points at /ws on the page host with the page token, ws for http and wss for https', () => {
    expect(webSocketUrlFor('http://127.0.0.1:7420/?token=abc-_9')).toBe('ws://127.0.0.1:7420/ws?token=abc-_9');
    expect(webSocketUrlFor('https://box.lan:8443/index.html?token=a%2Bb#x')).toBe('wss://box.lan:8443/ws?token=a%2Bb');
  });

  it('without a token points at /ws alone, for the page cookie to vouch for', () => {
    expect(webSocketUrlFor('http://127.0.0.1:7420/#/runs')).toBe('ws://127.0.0.1:7420/ws');
  });
});
