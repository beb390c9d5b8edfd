/**
 * The fault proxy on loopback, in-process: delays stay within their bound and never reorder, a stall holds a
 * direction for its length, a drop is a reset on both sides (never an orderly FIN, which the coordinator
 * would read as a crashed agent), an endpoint's FIN is passed on as a FIN and its reset as a reset.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../integration/helpers/wait';
import { FaultProxy, NO_FAULTS, seededRandom, type FaultPlan } from './helpers/fault-proxy';

interface Peer {
  socket: net.Socket;
  data: string;
  ended: boolean;
  errorCode: string | null;
  closed: boolean;
}

function watch(socket: net.Socket): Peer {
  const peer: Peer = { socket, data: '', ended: false, errorCode: null, closed: false };
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (peer.data += d));
  socket.on('end', () => (peer.ended = true));
  socket.on('error', (e: NodeJS.ErrnoException) => (peer.errorCode = e.code ?? e.message));
  socket.on('close', () => (peer.closed = true));
  return peer;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A server on 127.0.0.1 whose accepted connections are watched, and a proxy in front of it. */
async function setup(plan: Partial<FaultPlan>, onConnection?: (peer: Peer) => void) {
  const accepted: Peer[] = [];
  const server = net.createServer({ allowHalfOpen: true }, (s) => {
    const peer = watch(s);
    accepted.push(peer);
    onConnection?.(peer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  const proxy = await FaultProxy.listen({ host: '127.0.0.1', port: 0 }, { host: '127.0.0.1', port }, { ...NO_FAULTS, ...plan });
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  cleanups.push(() => proxy.close());
  const connect = async () => {
    const socket = net.connect({ host: '127.0.0.1', port: proxy.port, allowHalfOpen: true });
    cleanups.push(() => void socket.destroy());
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    return watch(socket);
  };
  return { proxy, accepted, connect };
}

const until = (what: string, check: () => boolean, timeoutMs = 5_000) => waitFor(what, check, { timeoutMs, recheckMs: 10 });

describe('fault proxy', () => {
  it('passes data both ways and an orderly FIN as a FIN', async () => {
    const { connect, accepted, proxy } = await setup({});
    const client = await connect();
    client.socket.end('hello');
    await until('the server to get the FIN', () => accepted[0]?.ended === true);
    expect(accepted[0]!.data).toBe('hello');
    accepted[0]!.socket.end('bye');
    await until('the client to get the FIN', () => client.ended);
    expect(client.data).toBe('bye');
    expect([client.errorCode, accepted[0]!.errorCode]).toEqual([null, null]);
    expect(proxy.stats.finsPassed).toBe(2);
  });

  it('delays each chunk by at most maxDelayMs and keeps their order', async () => {
    const arrivals: { i: number; delay: number }[] = [];
    const { connect } = await setup({ maxDelayMs: 800, seed: 42 }, (peer) => {
      let carry = '';
      peer.socket.on('data', (d: string) => {
        const parts = (carry + d).split('\n');
        carry = parts.pop()!;
        for (const p of parts) {
          const [i, sentAt] = p.split(',').map(Number) as [number, number];
          arrivals.push({ i, delay: Date.now() - sentAt });
        }
      });
    });
    const client = await connect();
    const N = 40;
    for (let i = 0; i < N; i++) {
      client.socket.write(`${i},${Date.now()}\n`);
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    await until('every message to arrive', () => arrivals.length === N, 5_000);
    expect(arrivals.map((a) => a.i)).toEqual([...Array(N).keys()]);
    const delays = arrivals.map((a) => a.delay);
    expect(Math.max(...delays), `delays ${delays.join(' ')}`).toBeLessThanOrEqual(800 + 60);
    // The delays are real and spread, not a constant.
    expect(Math.max(...delays)).toBeGreaterThan(300);
    expect(Math.min(...delays)).toBeLessThan(Math.max(...delays) - 200);
  });

  it('a stall holds the direction for stallMs, and what follows waits behind it', async () => {
    // stallEveryMs: the first chunk after 300 ms stalls, the next (100 ms later) does not, but must not overtake.
    const { connect, accepted, proxy } = await setup({ stallEveryMs: 300, stallMs: 2000 });
    const client = await connect();
    await new Promise((resolve) => setTimeout(resolve, 350));
    const sentAt = Date.now();
    client.socket.write('first|');
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.socket.write('second|');
    await until('a chunk to arrive', () => (accepted[0]?.data ?? '') !== '', 5_000);
    const took = Date.now() - sentAt;
    await until('both chunks to arrive', () => accepted[0]?.data === 'first|second|', 1_000);
    expect(took).toBeGreaterThanOrEqual(2000);
    expect(took).toBeLessThan(2600);
    expect(proxy.stats.stalls).toBe(1);
  });

  it('a drop resets both sides: neither sees an orderly FIN', async () => {
    const { connect, accepted, proxy } = await setup({ dropChance: 1 });
    const client = await connect();
    // Wait for the proxy's own connection upstream, so the reset reaches an established server socket.
    await until('the server to accept', () => accepted.length === 1);
    client.socket.write('x');
    await until('both sides closed', () => client.closed && accepted[0]!.closed);
    expect(client.errorCode).toBe('ECONNRESET');
    expect(accepted[0]!.errorCode).toBe('ECONNRESET');
    expect([client.ended, accepted[0]!.ended]).toEqual([false, false]);
    expect(accepted[0]!.data, 'the dropped chunk is not delivered').toBe('');
    expect(proxy.stats.drops).toBe(1);
  });

  it('dropEveryMs drops the first chunk after each interval', async () => {
    const { connect, proxy } = await setup({ dropEveryMs: 300 });
    const first = await connect();
    first.socket.write('early');
    await new Promise((resolve) => setTimeout(resolve, 400));
    first.socket.write('late');
    await until('the connection to be reset', () => first.closed);
    expect(first.errorCode).toBe('ECONNRESET');
    expect(proxy.stats.drops).toBe(1);
  });

  it("an endpoint's reset reaches the other side as a reset, at once", async () => {
    const { connect, accepted, proxy } = await setup({ maxDelayMs: 500 });
    const client = await connect();
    await until('the server to accept', () => accepted.length === 1);
    const at = Date.now();
    accepted[0]!.socket.resetAndDestroy();
    await until('the client to close', () => client.closed);
    expect(client.errorCode).toBe('ECONNRESET');
    expect(client.ended).toBe(false);
    expect(Date.now() - at).toBeLessThan(400);
    expect(proxy.stats.resetsPassed).toBe(1);
  });

  it('the fault dice are seeded: one seed, one sequence', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const c = seededRandom(8);
    const seqA = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(seqA);
    expect(Array.from({ length: 5 }, c)).not.toEqual(seqA);
    for (const x of seqA) expect(x >= 0 && x < 1).toBe(true);
  });
});
