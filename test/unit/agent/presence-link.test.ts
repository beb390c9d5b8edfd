import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { PRESENCE_CLOSE, PRESENCE_POKE } from '../../../src-shared/worker-protocol';
import { PresenceLink, cutUtf8 } from '../../../src-main/agent/presence-link';
import { FakeClock } from '../coordinator/fake-clock';
import { waitFor } from './fake-coordinator';

/** What the server saw of one socket: its headers and how it ended (1005: no code; 1006: no close frame at all). */
interface Seen {
  socket: WebSocket;
  headers: http.IncomingHttpHeaders;
  code: number | null;
  reason: string;
}

let server: http.Server;
let wss: WebSocketServer;
let seen: Seen[];
let url: URL;
let links: PresenceLink[];
const logs: string[] = [];

async function startServer(autoPong: boolean): Promise<void> {
  server = http.createServer();
  wss = new WebSocketServer({ server, autoPong });
  wss.on('connection', (socket, req) => {
    const s: Seen = { socket, headers: req.headers, code: null, reason: '' };
    seen.push(s);
    socket.on('close', (code, reason) => {
      s.code = code;
      s.reason = reason.toString('utf8');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = new URL(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/workers/3/presence`);
}

function link(extra: { timeoutMs?: number; clock?: FakeClock; onRefused?: (r: string) => void; onPoke?: () => void } = {}): PresenceLink {
  const l = new PresenceLink({
    url,
    headers: () => ({ authorization: 'Bearer tok', 'x-gpu-share-session': 'sess' }),
    connector: null,
    heartbeatTimeoutMs: () => extra.timeoutMs ?? 5000,
    ...(extra.clock ? { clock: extra.clock } : {}),
    onRefused: extra.onRefused ?? (() => undefined),
    ...(extra.onPoke ? { onPoke: extra.onPoke } : {}),
    log: (line) => logs.push(line),
  });
  links.push(l);
  l.start();
  return l;
}

beforeEach(() => {
  seen = [];
  links = [];
  logs.length = 0;
});
afterEach(async () => {
  for (const l of links) await l.close('test over');
  for (const c of wss.clients) c.terminate();
  wss.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('PresenceLink', () => {
  beforeEach(() => startServer(true));

  it('a poke from the coordinator asks for a heartbeat now; any other message is ignored', async () => {
    let pokes = 0;
    const l = link({ onPoke: () => pokes++ });
    await waitFor('the socket', () => l.isOpen());
    seen[0]!.socket.send('{"type":"something else"}');
    seen[0]!.socket.send(Buffer.from(PRESENCE_POKE), { binary: true });
    seen[0]!.socket.send(PRESENCE_POKE);
    await waitFor('the poke', () => pokes > 0);
    await new Promise((r) => setTimeout(r, 100));
    expect(pokes).toBe(1);
  });

  it('opens with both headers and says BYE (4000) with the reason when closed', async () => {
    const l = link();
    await waitFor('the socket', () => l.isOpen());
    expect(seen[0]!.headers.authorization).toBe('Bearer tok');
    expect(seen[0]!.headers['x-gpu-share-session']).toBe('sess');
    await l.close('user pressed Ctrl-C');
    await waitFor('the close at the server', () => seen[0]!.code !== null);
    expect(seen[0]).toMatchObject({ code: PRESENCE_CLOSE.BYE, reason: 'user pressed Ctrl-C' });
    await new Promise((r) => setTimeout(r, 400));
    expect(seen).toHaveLength(1); // and does not come back
  });

  it('opens a new socket after the server drops one, and again after each drop', async () => {
    const l = link();
    await waitFor('the first socket', () => seen.length === 1 && l.isOpen());
    seen[0]!.socket.terminate();
    await waitFor('the second socket', () => seen.length === 2 && l.isOpen(), 3000);
    seen[1]!.socket.close(1001, 'going away');
    await waitFor('the third socket', () => seen.length === 3 && l.isOpen(), 3000);
    // Three sockets in all (what the server counts), the two dropped ones closed and not reopened twice.
    await waitFor('the dropped ones closed at the server', () => seen[0]!.code !== null && seen[1]!.code !== null, 3000);
    expect(seen.map((x) => x.code)).toEqual([1006, 1001, null]);
  });

  it('REFUSED means the session is gone: it says so and does not reopen', async () => {
    const refused: string[] = [];
    const l = link({ onRefused: (r) => refused.push(r) });
    await waitFor('the socket', () => l.isOpen());
    seen[0]!.socket.close(PRESENCE_CLOSE.REFUSED, 'unknown session');
    await waitFor('the refusal', () => refused.length === 1);
    expect(refused).toEqual(['unknown session']);
    await new Promise((r) => setTimeout(r, 600));
    expect(seen).toHaveLength(1);
  });

  it('an answered ping keeps the socket: one per half the timeout, on the clock', async () => {
    const clock = new FakeClock();
    const l = link({ timeoutMs: 1000, clock });
    await waitFor('the socket', () => l.isOpen());
    let pings = 0;
    seen[0]!.socket.on('ping', () => pings++);
    for (let i = 1; i <= 3; i++) {
      clock.advance(500);
      await waitFor(`ping ${i}`, () => pings === i, 3000);
      await new Promise((r) => setTimeout(r, 50)); // its pong comes back
    }
    expect(seen).toHaveLength(1);
    expect(l.isOpen()).toBe(true);
  });

  it('does not fight a REPLACED close', async () => {
    const l = link();
    await waitFor('the socket', () => l.isOpen());
    seen[0]!.socket.close(PRESENCE_CLOSE.REPLACED, 'another link');
    await new Promise((r) => setTimeout(r, 600));
    expect(seen).toHaveLength(1);
    expect(logs.some((x) => x.includes('replaced by another link'))).toBe(true);
  });
});

describe('PresenceLink with a server that stops answering pings', () => {
  beforeEach(() => startServer(false));

  it('replaces the stale socket, closing it with RECONNECTING (4001), never abruptly', async () => {
    const l = link({ timeoutMs: 500 }); // pings every 250 ms; unanswered at the next one means stale
    await waitFor('a replacement socket', () => seen.length >= 2, 3000);
    await waitFor('the close of the stale one', () => seen[0]!.code !== null, 3000);
    expect(seen[0]!.code).toBe(PRESENCE_CLOSE.RECONNECTING);
    expect(logs.some((x) => /no answer to a ping within 250 ms; opening a new link/.test(x))).toBe(true);
    await l.close('done');
  });

  it('pings once per half the timeout, never more often, and replaces a socket whose ping is unanswered at the next', async () => {
    const clock = new FakeClock();
    const l = link({ timeoutMs: 1000, clock });
    await waitFor('the first socket', () => l.isOpen(), 3000);
    let pings = 0;
    seen[0]!.socket.on('ping', () => pings++);
    clock.advance(499);
    await new Promise((r) => setTimeout(r, 100));
    expect(pings).toBe(0);
    clock.advance(1);
    await waitFor('the first ping', () => pings === 1, 3000);
    clock.advance(499);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toHaveLength(1);
    clock.advance(1);
    await waitFor('a replacement socket', () => seen.length === 2, 3000);
    await waitFor('the close of the stale one', () => seen[0]!.code !== null, 3000);
    expect(seen[0]!.code).toBe(PRESENCE_CLOSE.RECONNECTING);
    expect(pings).toBe(1); // one unanswered ping, then the swap: no second ping in between
    expect(logs.some((x) => /no answer to a ping within 500 ms; opening a new link/.test(x))).toBe(true);
    await l.close('done');
  });
});

describe('cutUtf8', () => {
  it('keeps reasons within 100 bytes without splitting a character', () => {
    expect(cutUtf8('short')).toBe('short');
    const cut = cutUtf8('é'.repeat(80));
    expect(Buffer.byteLength(cut)).toBe(100);
    expect(cut).toBe('é'.repeat(50));
  });
});
