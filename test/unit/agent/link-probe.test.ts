/** The agent's link probe server and client over loopback: tokens (single use, expiring, bounded), caps, the numbers. */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LinkProbeServer } from '../../../src-main/agent/link-probe-server';
import { measureLinks } from '../../../src-main/agent/link-probe-client';
import { AgentLinkProbes } from '../../../src-main/agent/link-probes';
import { instructionSchema, reportSchema } from '../../../src-shared/worker-protocol';

const servers: LinkProbeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(opts: ConstructorParameters<typeof LinkProbeServer>[0] = {}) {
  const server = new LinkProbeServer(opts);
  servers.push(server);
  const port = await server.listen(0, '127.0.0.1');
  return { server, port };
}

const TOKEN = 'tok_abcdefghijklmnopqrstuvwxyz012345';
const target = (port: number, token = TOKEN) => ({ workerId: 2, node: 'beta', host: '127.0.0.1', port, token });

/** Resolves with what the server sent before it closed the connection. */
function rawExchange(port: number, send: string, waitMs = 3000, localAddress?: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, ...(localAddress ? { localAddress } : {}) });
    let got = '';
    s.on('data', (d) => (got += d.toString()));
    s.on('close', () => resolve(got));
    s.on('error', () => undefined);
    s.on('connect', () => { if (send) s.write(send); });
    setTimeout(() => { s.destroy(); resolve(`(still open) ${got}`); }, waitMs);
  });
}

describe('link probe instructions', () => {
  it('name any worker, the app\'s own (id 0) included, and bound what a report carries', () => {
    const measure = { kind: 'measure-links', probeId: 'link-1', targets: [{ ...target(1), workerId: 0 }], maxBytes: 4 << 20, maxMs: 1500 };
    expect(instructionSchema.safeParse(measure).success).toBe(true);
    expect(instructionSchema.safeParse({ ...measure, maxBytes: 64 << 20 }).success).toBe(false);
    expect(instructionSchema.safeParse({ kind: 'accept-link-probe', token: TOKEN, fromNode: 'a', expiresInMs: 60_000 }).success).toBe(false);
    const report = { type: 'links', probeId: 'link-1', results: [{ toId: 0, mbps: 19.5, rttMs: 0.2 }] };
    expect(reportSchema.safeParse(report).success).toBe(true);
    expect(reportSchema.safeParse({ ...report, results: Array.from({ length: 65 }, () => report.results[0]) }).success).toBe(false);
  });
});

describe('link probe', () => {
  it('measures bandwidth and round-trip time with a token the server was told to expect', async () => {
    const { server, port } = await start();
    server.expect(TOKEN, 'alpha', 10_000);
    const [r] = await measureLinks({ targets: [target(port)], maxBytes: 4 * 1024 * 1024, maxMs: 1500 });
    expect(r!.error).toBeUndefined();
    expect(r!.toId).toBe(2);
    expect(r!.mbps).toBeGreaterThan(50); // loopback: far above any home link
    expect(r!.rttMs).toBeGreaterThanOrEqual(0);
    expect(r!.rttMs).toBeLessThan(200);
  });

  it('closes a connection with a forged token at once and says why in words', async () => {
    const { server, port } = await start();
    server.expect(TOKEN, 'alpha', 10_000);
    expect(await rawExchange(port, 'forged_token_000000000000000\nPING\n')).toBe('');
    expect(server.refused).toBe(1);
    const [r] = await measureLinks({ targets: [target(port, 'another_token_00000000000000')], maxBytes: 65536, maxMs: 500 }, { connectRetryMs: 300 });
    expect(r!.mbps).toBeNull();
    expect(r!.error).toMatch(/^beta 127\.0\.0\.1:\d+: it closed the connection/);
  });

  it('takes a token once: a second use is refused', async () => {
    const { server, port } = await start();
    server.expect(TOKEN, 'alpha', 10_000);
    const first = await measureLinks({ targets: [target(port)], maxBytes: 256 * 1024, maxMs: 500 });
    expect(first[0]!.error).toBeUndefined();
    const again = await measureLinks({ targets: [target(port)], maxBytes: 256 * 1024, maxMs: 500 }, { connectRetryMs: 200 });
    expect(again[0]!.mbps).toBeNull();
  });

  it('refuses an expired token', async () => {
    let now = 1_000_000;
    const { server, port } = await start({ now: () => now });
    server.expect(TOKEN, 'alpha', 5000);
    now += 5001;
    expect(await rawExchange(port, `${TOKEN}\n`)).toBe('');
    expect(server.refused).toBe(1);
  });

  it('holds at most 16 tokens (the oldest dropped) and caps a token at 30 s', async () => {
    let now = 0;
    const { server, port } = await start({ now: () => now });
    for (let i = 0; i < 20; i++) server.expect(`token_number_${String(i).padStart(4, '0')}`, 'alpha', 999_999);
    expect(server.heldTokens()).toBe(16);
    expect(await rawExchange(port, 'token_number_0000\n')).toBe(''); // dropped
    expect(await rawExchange(port, 'token_number_0019\nPING\n', 300)).toBe('(still open) OK\nPONG\n');
    now += 30_001; // longer than any token may live
    expect(server.heldTokens()).toBe(0);
  });

  it('closes a connection that shows no token within the wait', async () => {
    const { server, port } = await start({ tokenWaitMs: 200 });
    const t0 = Date.now();
    expect(await rawExchange(port, '')).toBe('');
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(server.refused).toBe(1);
  });

  it('serves at most 2 connections at once', async () => {
    const { server, port } = await start({ tokenWaitMs: 1500 });
    server.expect(TOKEN, 'alpha', 10_000); // from any address: one slot each (link-probe-strangers.test.ts)
    const hold = [rawExchange(port, '', 1000, '127.0.0.1'), rawExchange(port, '', 1000, '127.0.0.2')];
    await new Promise((r) => setTimeout(r, 150));
    expect(await rawExchange(port, '', 3000, '127.0.0.3')).toBe(''); // the third is closed at once
    expect(server.refused).toBe(1);
    await Promise.all(hold);
  });

  it('stops counting at the byte cap and answers', async () => {
    const { server, port } = await start({ maxBytes: 512 * 1024 });
    server.expect(TOKEN, 'alpha', 10_000);
    const [r] = await measureLinks({ targets: [target(port)], maxBytes: 4 * 1024 * 1024, maxMs: 3000 });
    expect(r!.error).toBeUndefined();
    expect(r!.mbps).toBeGreaterThan(0);
  });

  it('answers at most 32 pings on one connection', async () => {
    const { server, port } = await start();
    server.expect(TOKEN, 'alpha', 10_000);
    const got = await rawExchange(port, `${TOKEN}\n${'PING\n'.repeat(40)}`);
    expect(got).toBe(`OK\n${'PONG\n'.repeat(32)}`);
    expect(server.refused).toBe(1);
  });

  it('says a refused connection in words', async () => {
    const { port } = await start();
    await Promise.all(servers.splice(0).map((s) => s.close()));
    const [r] = await measureLinks({ targets: [target(port)], maxBytes: 65536, maxMs: 200 }, { connectRetryMs: 100 });
    expect(r!.error).toMatch(/^beta 127\.0\.0\.1:\d+: connection refused/);
  });
});

describe('the agent\'s link probes', () => {
  it('obeys accept-link-probe and measure-links: one measurement after another, each reported as links', async () => {
    const receiver = new AgentLinkProbes();
    const sender = new AgentLinkProbes({ client: { connectRetryMs: 300 } });
    const port = (await receiver.listen())!;
    await sender.listen();
    try {
      const reports: unknown[] = [];
      const t1 = 'first_token_0000000000000000';
      const t2 = 'second_token_000000000000000';
      receiver.obey({ kind: 'accept-link-probe', token: t1, fromNode: 'alpha', expiresInMs: 10_000 }, () => undefined);
      receiver.obey({ kind: 'accept-link-probe', token: t2, fromNode: 'alpha', expiresInMs: 10_000 }, () => undefined);
      const measure = (probeId: string, token: string) =>
        sender.obey({ kind: 'measure-links', probeId, targets: [{ workerId: 0, node: 'beta', host: '127.0.0.1', port, token }], maxBytes: 1 << 20, maxMs: 500 }, (r) => reports.push(r));
      measure('link-1', t1);
      measure('link-2', t2);
      measure('link-3', t1); // used already: refused, reported as an error
      for (let i = 0; i < 100 && reports.length < 3; i++) await new Promise((r) => setTimeout(r, 50));
      expect(reports.map((r) => (r as { probeId: string }).probeId)).toEqual(['link-1', 'link-2', 'link-3']);
      const results = reports.map((r) => (r as { results: { mbps: number | null; error?: string }[] }).results[0]!);
      expect(results[0]!.mbps).toBeGreaterThan(0);
      expect(results[1]!.mbps).toBeGreaterThan(0);
      expect(results[2]!.mbps).toBeNull();
      expect(results[2]!.error).toMatch(/^beta 127\.0\.0\.1:\d+: /);
    } finally {
      await Promise.all([receiver.close(), sender.close()]);
    }
  });
});
