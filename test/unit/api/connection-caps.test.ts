// The socket caps of connection-guard.ts (issue 26, item 4) on a real port on 127.0.0.1, with addresses of
// 127.0.0.0/8 standing for LAN machines (only 127.0.0.1 is served first here): strangers of one /24 together
// hold at most their network cap, and a neighbour's first socket is let in by closing the oldest of the address
// holding the most; strangers hold at most their share of the port, the rest staying for those served first.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { addressKey, networkKey } from '../../../src-main/platform/net/address-key';
import { guardConnections, type ConnectionGuard, type ConnectionLimits } from '../../../src-main/platform/net/connection-guard';
import { RememberedPeers } from '../../../src-main/platform/net/remembered-peers';
import { dripper, holdsWithin } from '../helpers/dripping-socket';

const sockets: net.Socket[] = [];
let server: net.Server | null = null;

afterEach(async () => {
  while (sockets.length) sockets.pop()!.destroy();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
});

async function listen(limits: ConnectionLimits, servedFirst = (a: string) => a === '127.0.0.1'): Promise<{ port: number; guard: ConnectionGuard }> {
  server = net.createServer((s) => s.on('error', () => undefined));
  const guard = guardConnections(server, limits, servedFirst);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, guard };
}

/** Opens `n` sockets from `from` one after another, each taken by the server before the next. */
async function open(port: number, guard: ConnectionGuard, from: string, n: number): Promise<net.Socket[]> {
  const mine: net.Socket[] = [];
  for (let i = 0; i < n; i++) {
    const before = guard.open() + guard.refused() + guard.evicted();
    mine.push(await dripper(sockets, port, null, from));
    await holdsWithin(() => guard.open() + guard.refused() + guard.evicted() > before, 1_000);
  }
  return mine;
}

const alive = (list: net.Socket[]) => list.filter((s) => !s.destroyed && s.readyState === 'open').length;

describe('connection caps per network, share and fairness', () => {
  it("holds one /24's strangers to their network cap, lets a neighbour's first sockets in at the heaviest's expense, and leaves other networks alone", async () => {
    const { port, guard } = await listen({ perAddress: 8, perNetwork: 12, total: 100 });
    await open(port, guard, '127.0.5.1', 8);
    await open(port, guard, '127.0.5.2', 8);
    // The second address took its place beside the first: two of the first's oldest sockets went.
    expect(guard.open()).toBe(12);
    expect([guard.from('127.0.5.1'), guard.from('127.0.5.2'), guard.evicted()]).toEqual([6, 6, 2]);
    // A browser's first sockets from the same /24: each closes the oldest of the address holding the most.
    const neighbour = await open(port, guard, '127.0.5.3', 3);
    expect(await holdsWithin(() => alive(neighbour) === 3, 1_000)).toBe(true);
    expect(guard.open()).toBe(12);
    expect(guard.evicted()).toBe(5);
    expect([guard.from('127.0.5.1'), guard.from('127.0.5.2'), guard.from('127.0.5.3')].sort()).toEqual([3, 4, 5].sort());
    // Another /24 is not counted with this one.
    await open(port, guard, '127.0.6.1', 4);
    expect(guard.from('127.0.6.1')).toBe(4);
  });

  it('refuses a stranger when nobody in its network holds more than it would', async () => {
    const { port, guard } = await listen({ perAddress: 8, perNetwork: 3, total: 100 });
    for (const from of ['127.0.7.1', '127.0.7.2', '127.0.7.3']) await open(port, guard, from, 1);
    const refusedBefore = guard.refused();
    await open(port, guard, '127.0.7.4', 1);
    expect(guard.refused()).toBe(refusedBefore + 1);
    expect(guard.from('127.0.7.4')).toBe(0);
    expect(guard.open()).toBe(3);
  });

  it('keeps a quarter of the port for peers served first: strangers over their share are refused, loopback still gets in', async () => {
    const { port, guard } = await listen({ perAddress: 4, perNetwork: 100, total: 16 });
    for (let i = 1; i <= 4; i++) await open(port, guard, `127.0.9.${i}`, 4);
    expect(guard.open()).toBe(12); // three quarters of 16
    await open(port, guard, '127.0.10.1', 1);
    expect(guard.open()).toBe(12);
    const own = await open(port, guard, '127.0.0.1', 4);
    expect(await holdsWithin(() => alive(own) === 4, 1_000)).toBe(true);
    expect(guard.open()).toBe(16);
  });
});

describe('address keys and remembered peers', () => {
  it('counts IPv4 by /24 and IPv6 by /64 as a network', () => {
    expect(networkKey('10.1.2.3')).toBe('10.1.2.0/24');
    expect(networkKey('::ffff:10.1.2.3')).toBe('10.1.2.0/24');
    expect(networkKey('fd00:1:2:3:4:5:6:7')).toBe(addressKey('fd00:1:2:3::9'));
  });

  it('serves loopback and remembered addresses first, forgetting the least recently seen past its bound', () => {
    const peers = new RememberedPeers(2);
    expect(peers.servedFirst('127.0.0.1')).toBe(true);
    expect(peers.servedFirst('10.0.0.1')).toBe(false);
    peers.remember('10.0.0.1');
    peers.remember('10.0.0.2');
    peers.remember('10.0.0.1');
    peers.remember('10.0.0.3');
    expect([peers.servedFirst('10.0.0.1'), peers.servedFirst('10.0.0.2'), peers.servedFirst('10.0.0.3')]).toEqual([true, false, true]);
  });
});
