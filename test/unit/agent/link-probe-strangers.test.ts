// The link probe server against a stranger (issue 26, item 7): only addresses the coordinator named get a slot,
// one slot per address, and refusals are one summary line per period, not one line each. Loopback has many
// addresses (127.0.0.0/8): the stranger connects from 127.0.0.2 and .3, the member from 127.0.0.1.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LinkProbeServer } from '../../../src-main/agent/link-probe-server';
import { measureLinks } from '../../../src-main/agent/link-probe-client';
import { instructionSchema } from '../../../src-shared/worker-protocol';

const servers: LinkProbeServer[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const TOKEN = 'tok_abcdefghijklmnopqrstuvwxyz012345';
const target = (port: number) => ({ workerId: 2, node: 'beta', host: '127.0.0.1', port, token: TOKEN });

async function start(opts: ConstructorParameters<typeof LinkProbeServer>[0] = {}) {
  const server = new LinkProbeServer(opts);
  servers.push(server);
  return { server, port: await server.listen(0, '127.0.0.1') };
}

/** A socket from `localAddress` that says nothing; resolves whether it was closed within `ms` (true) or is still held. */
function hold(port: number, localAddress: string, ms = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, localAddress });
    sockets.push(s);
    s.on('error', () => undefined);
    s.on('close', () => resolve(true));
    setTimeout(() => resolve(false), ms);
  });
}

describe('link probe server and strangers', () => {
  it('closes a stranger at once without a slot, so the member named in the instruction still measures', async () => {
    const { server, port } = await start();
    server.expect(TOKEN, 'alpha', 10_000, ['127.0.0.1']);
    // A stranger holding sockets open: before, two of them took both slots and every member probe failed.
    const held = await Promise.all([hold(port, '127.0.0.2'), hold(port, '127.0.0.3'), hold(port, '127.0.0.2')]);
    expect(held).toEqual([true, true, true]);
    expect(server.refused).toBe(3);
    const [r] = await measureLinks({ targets: [target(port)], maxBytes: 256 * 1024, maxMs: 500 }, { connectRetryMs: 500 });
    expect(r!.error).toBeUndefined();
    expect(r!.mbps).toBeGreaterThan(0);
  });

  it('gives one address one slot at a time', async () => {
    const { server, port } = await start();
    server.expect(TOKEN, 'alpha', 10_000, ['127.0.0.1', '127.0.0.2']);
    expect(await hold(port, '127.0.0.1', 300)).toBe(false); // held: it may still present its token
    expect(await hold(port, '127.0.0.1', 300)).toBe(true); // the second from that address is closed at once
    expect(await hold(port, '127.0.0.2', 300)).toBe(false); // another member's address still gets the other slot
    expect(server.refused).toBe(1);
  });

  it('refuses everyone when no probe was announced, and a token presented from an address it does not name', async () => {
    const { server, port } = await start();
    expect(await hold(port, '127.0.0.1')).toBe(true);
    server.expect(TOKEN, 'alpha', 10_000, ['127.0.0.2']);
    const [r] = await measureLinks({ targets: [target(port)], maxBytes: 65536, maxMs: 300 }, { connectRetryMs: 300 });
    expect(r!.mbps).toBeNull();
    expect(server.heldTokens()).toBe(1); // not spent by the wrong address
  });

  it('logs refusals as one summary line per period, naming counts and examples', async () => {
    const lines: string[] = [];
    const { server, port } = await start({ refusalLogMs: 1500, log: (l) => lines.push(l) });
    server.expect(TOKEN, 'alpha', 10_000, ['127.0.0.1']);
    await Promise.all(Array.from({ length: 60 }, (_, i) => hold(port, i % 2 === 0 ? '127.0.0.2' : '127.0.0.3', 400)));
    expect(server.refused).toBe(60);
    expect(lines).toEqual([]);
    await new Promise((r) => setTimeout(r, 1600));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^link probe server: refused 60 connections from 2 addresses in the last 2 s, e\.g\. 127\.0\.0\.[23] \(no probe from this address was announced by the coordinator\), 127\.0\.0\.[23] \(/);
  });

  it('takes the member addresses in the accept instruction, at most 8', () => {
    const accept = { kind: 'accept-link-probe', token: TOKEN, fromNode: 'a', expiresInMs: 10_000 };
    expect(instructionSchema.safeParse({ ...accept, fromAddresses: ['10.0.0.2', 'fd00::2'] }).success).toBe(true);
    expect(instructionSchema.safeParse(accept).success).toBe(true);
    expect(instructionSchema.safeParse({ ...accept, fromAddresses: Array.from({ length: 9 }, (_, i) => `10.0.0.${i}`) }).success).toBe(false);
  });
});
