// Bodies before authentication (issue 26, item 3), over real sockets on 127.0.0.1: a join challenge that declares
// more than 1 KiB is refused 413 before a byte of it is read; a body that stalls is cut at the 5 s pre-auth
// deadline (10 s for other bodies); the bytes all pre-auth bodies may hold together are a budget, and a request
// over it is answered 503 with Retry-After instead of being buffered — with a share kept for loopback.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startCoordinatorHttp, type CoordinatorHttp, type CoordinatorHttpOptions } from '../../../src-main/core/api/coordinator-http';
import { servedFirstByCluster } from '../../../src-main/core/api/served-first';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { apiPaths } from '../../../src-shared/worker-protocol';
import { FakeClock } from '../coordinator/fake-clock';

const JOIN = 'join-' + 'a'.repeat(20);
const OPERATOR = 'op-' + 'b'.repeat(20);

let api: CoordinatorHttp | null = null;
const sockets: net.Socket[] = [];

afterEach(async () => {
  while (sockets.length) sockets.pop()!.destroy();
  await api?.close();
  api = null;
});

async function start(extra: Partial<CoordinatorHttpOptions> = {}): Promise<CoordinatorHttp> {
  const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
  api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR, ...extra });
  return api;
}

interface Held {
  socket: net.Socket;
  /** The status line's code and how long after the headers were sent it came (ms); null if the socket closed first. */
  reply: Promise<{ status: number; afterMs: number; headers: string } | null>;
}

/** A POST whose headers declare `declared` bytes (null: chunked) and whose body is `body` so far, never finished. */
function post(port: number, path: string, declared: number | null, body: string, localAddress = '127.0.0.1', extraHead = ''): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress });
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.once('error', reject);
    socket.once('connect', () => {
      const length = declared === null ? 'transfer-encoding: chunked' : `content-length: ${declared}`;
      const t0 = Date.now();
      socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${extraHead}${length}\r\n\r\n${body}`);
      let got = '';
      const reply = new Promise<{ status: number; afterMs: number; headers: string } | null>((done) => {
        socket.on('data', (d: Buffer) => {
          got += d.toString('latin1');
          const end = got.indexOf('\r\n\r\n');
          if (end >= 0) done({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(got)?.[1] ?? 0), afterMs: Date.now() - t0, headers: got.slice(0, end).toLowerCase() });
        });
        socket.once('close', () => done(null));
      });
      resolve({ socket, reply });
    });
  });
}

const CHALLENGE = apiPaths.joinChallenge;

describe('bodies before authentication', () => {
  it('refuses a join challenge declaring 1 MiB with 413 at once, before reading any of it, and closes the connection', async () => {
    const { port } = await start();
    const held = await post(port, CHALLENGE, 1024 * 1024, '');
    const reply = await held.reply;
    expect(reply?.status).toBe(413);
    expect(reply!.afterMs).toBeLessThan(1_000);
    expect(reply!.headers).toContain('connection: close');
    // A join over 16 KiB likewise, before its proof is even looked at.
    const join = await (await post(port, apiPaths.join, 17 * 1024, '')).reply;
    expect(join?.status).toBe(413);
  });

  it('refuses a chunked join challenge once it passes 1 KiB', async () => {
    const { port } = await start();
    const chunk = 'a'.repeat(600);
    const held = await post(port, CHALLENGE, null, `${chunk.length.toString(16)}\r\n${chunk}\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    expect((await held.reply)?.status).toBe(413);
  });

  it('cuts a join challenge body that stalls at the 5 s pre-auth deadline (other bodies keep 10 s)', async () => {
    const { port } = await start();
    const held = await post(port, CHALLENGE, 200, '{"workerNonce":');
    const reply = await held.reply;
    expect(reply?.status).toBe(408);
    expect(reply!.afterMs).toBeGreaterThanOrEqual(4_500);
    expect(reply!.afterMs).toBeLessThan(7_000);
    expect(api!.openConnections()).toBeLessThanOrEqual(1);
  }, 15_000);

  it('answers 503 with Retry-After once the pre-auth budget is held, keeps a share for loopback, and serves strangers again when it frees', async () => {
    const { port } = await start({ preAuthBodies: { budgetBytes: 4_096, perAddressBytes: 4_096, timeoutMs: 1_500 }, servedFirst: (a) => a === '127.0.0.1' });
    // Three strangers each hold 1,000 declared bytes: 3,000 of the 3,072 strangers may hold.
    const holders = await Promise.all(['127.0.8.1', '127.0.8.2', '127.0.8.3'].map((from) => post(port, CHALLENGE, 1_000, '{', from)));
    await new Promise((r) => setTimeout(r, 200));
    const over = await post(port, CHALLENGE, 1_000, '{', '127.0.8.4');
    const refused = await over.reply;
    expect(refused?.status).toBe(503);
    expect(refused!.afterMs).toBeLessThan(1_000);
    expect(refused!.headers).toMatch(/retry-after: \d+/);
    // Loopback may use the quarter strangers cannot: its challenge is read and answered (400: a body of no schema).
    const own = await post(port, CHALLENGE, 2, '{}', '127.0.0.1');
    expect((await own.reply)?.status).toBe(400);
    // The holders are cut at the deadline; the budget is free again.
    for (const h of holders) expect((await h.reply)?.status).toBe(408);
    const later = await post(port, CHALLENGE, 2, '{}', '127.0.8.4');
    expect((await later.reply)?.status).toBe(400);
  }, 15_000);

  it('holds one stranger address to a sixteenth of the budget', async () => {
    const { port } = await start({ preAuthBodies: { budgetBytes: 16_384, timeoutMs: 1_500 }, servedFirst: () => false });
    await post(port, CHALLENGE, 1_000, '{', '127.0.9.1');
    await new Promise((r) => setTimeout(r, 200));
    const second = await post(port, CHALLENGE, 100, '{', '127.0.9.1');
    const reply = await second.reply;
    expect(reply?.status).toBe(503);
    const other = await post(port, CHALLENGE, 2, '{}', '127.0.9.2');
    expect((await other.reply)?.status).toBe(400);
  }, 15_000);
});

describe('servedFirstByCluster', () => {
  it('serves loopback and the addresses of the machines that have not left first, rebuilt at most once a second', () => {
    let now = 0;
    let workers = [{ address: '10.0.0.5', state: 'active' as const }, { address: '::ffff:10.0.0.6', state: 'failed' as const }, { address: '10.0.0.7', state: 'left' as const }];
    const first = servedFirstByCluster(() => workers, () => now);
    expect(first('127.0.0.1')).toBe(true);
    expect(first('::1')).toBe(true);
    expect(first('::ffff:10.0.0.5')).toBe(true);
    expect(first('10.0.0.6')).toBe(true);
    expect(first('10.0.0.7')).toBe(false);
    expect(first('10.0.0.8')).toBe(false);
    workers = [];
    expect(first('10.0.0.5')).toBe(true);
    now = 1_000;
    expect(first('10.0.0.5')).toBe(false);
  });
});
