// The coordinator port under socket abuse (issue 14, item 5), over real sockets on 127.0.0.1 with short deadlines:
// sockets that drip a partial request and never read are destroyed, not half-closed; connections per source
// address are capped while another address is still served; joins are rate-limited per address.
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CoordinatorClient } from '../../../src-main/agent/coordinator-client';
import { joinOnce, JoinError } from '../../../src-main/agent/join-coordinator';
import { startCoordinatorHttp, type CoordinatorHttp, type CoordinatorHttpOptions } from '../../../src-main/core/api/coordinator-http';
import { loadOrCreateTlsIdentity } from '../../../src-main/platform/tls-identity';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { apiPaths } from '../../../src-shared/worker-protocol';
import { FakeClock } from '../coordinator/fake-clock';
import { dripper, holdsWithin } from '../helpers/dripping-socket';

const JOIN = 'join-' + 'a'.repeat(20);
const OPERATOR = 'op-' + 'b'.repeat(20);

let api: CoordinatorHttp | null = null;
const sockets: net.Socket[] = [];

afterEach(async () => {
  while (sockets.length) sockets.pop()!.destroy();
  await api?.close();
  api = null;
});

async function start(extra: Partial<CoordinatorHttpOptions>): Promise<CoordinatorHttp> {
  const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
  api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR, ...extra });
  return api;
}


function get(port: number, path: string, localAddress: string, method = 'GET'): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, localAddress, agent: false, headers: { authorization: `Bearer ${JOIN}`, 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(method === 'POST' ? '{}' : undefined);
  });
}

describe('coordinator port socket bounds', () => {
  it('destroys 200 sockets that send a partial request and never read, within the header deadline + 1 s', async () => {
    const { port } = await start({ headersTimeoutMs: 500, bodyTimeoutMs: 500 });
    const started = Date.now();
    await Promise.all(Array.from({ length: 200 }, (_, i) => dripper(sockets, port, i % 2 ? `POST ${apiPaths.join} HTTP/1.1\r\nhost: x\r\nx-slow: ` : 'GET /v1/hea')));
    expect(await holdsWithin(() => api!.openConnections() === 200, 400)).toBe(true);
    const allClosed = await holdsWithin(() => api!.openConnections() === 0, 1_500 - (Date.now() - started));
    expect(api!.openConnections()).toBe(0);
    expect(allClosed).toBe(true);
  });

  it('over TLS, destroys sockets that never finish the handshake within the header deadline + 1 s', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-socket-bounds-'));
    try {
      const tls = await loadOrCreateTlsIdentity(dir);
      const { port } = await start({ headersTimeoutMs: 500, tls: { certPem: tls.certPem, keyPem: tls.keyPem } });
      await Promise.all(Array.from({ length: 20 }, (_, i) => dripper(sockets, port, i % 2 ? null : '\x16\x03\x01\x00')));
      expect(await holdsWithin(() => api!.openConnections() === 20, 400)).toBe(true);
      expect(await holdsWithin(() => api!.openConnections() === 0, 1_500)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('destroys a socket whose body stalls after the 408, even when the client never reads', async () => {
    const { port } = await start({ headersTimeoutMs: 500, bodyTimeoutMs: 300 });
    await dripper(sockets, port, `POST ${apiPaths.join} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${JOIN}\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{"node":`);
    expect(api!.openConnections()).toBe(1);
    expect(await holdsWithin(() => api!.openConnections() === 0, 1_500)).toBe(true);
  });

  it('destroys a refused presence upgrade even when the client never reads the refusal', async () => {
    const { port } = await start({ headersTimeoutMs: 20_000 });
    const key = Buffer.alloc(16).toString('base64');
    await dripper(sockets, port, `GET /v1/workers/1/presence HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-key: ${key}\r\nsec-websocket-version: 13\r\nauthorization: Bearer wrong\r\n\r\n`);
    expect(await holdsWithin(() => api!.openConnections() === 0, 1_500)).toBe(true);
  });

  it('closes the 65th concurrent socket of one address at once, while another address is still served', async () => {
    const { port } = await start({ headersTimeoutMs: 20_000, connections: { perAddress: 64 } });
    const held = await Promise.all(Array.from({ length: 64 }, () => dripper(sockets, port, null)));
    expect(await holdsWithin(() => api!.openConnections() === 64, 1_000)).toBe(true);
    const extra = await dripper(sockets, port, 'GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n');
    const closedAt = await new Promise<number>((resolve) => {
      extra.resume();
      extra.once('close', () => resolve(Date.now()));
    });
    expect(closedAt).toBeGreaterThan(0);
    expect(api!.openConnections()).toBe(64);
    const other = await get(port, apiPaths.health, '127.0.0.2');
    expect(other.status).toBe(200);
    // One of the 64 goes: its address is served again.
    held[0]!.destroy();
    expect(await holdsWithin(() => api!.openConnections() === 63, 1_000)).toBe(true);
    expect((await get(port, apiPaths.health, '127.0.0.1')).status).toBe(200);
  });

  it('caps the whole port under the descriptor limit', async () => {
    const { port } = await start({ headersTimeoutMs: 20_000, connections: { perAddress: 64, total: 10 } });
    await Promise.all(Array.from({ length: 6 }, () => dripper(sockets, port, null, '127.0.0.3')));
    await Promise.all(Array.from({ length: 4 }, () => dripper(sockets, port, null, '127.0.0.4')));
    expect(await holdsWithin(() => api!.openConnections() === 10, 1_000)).toBe(true);
    await expect(get(port, apiPaths.health, '127.0.0.5')).rejects.toThrow();
  });

  it('rate-limits joins per source address with a 429 and retry-after; other addresses and other paths are not held back', async () => {
    const { port } = await start({ joinRateLimit: { burst: 3, perSecond: 1, exempt: () => false } });
    for (let i = 0; i < 3; i++) expect((await get(port, apiPaths.join, '127.0.0.6', 'POST')).status).not.toBe(429);
    const limited = await get(port, apiPaths.join, '127.0.0.6', 'POST');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(limited.body).error).toMatch(/^too many join requests from 127\.0\.0\.6: at most 3 at once and 1 a second per address \(a join takes two: its challenge and itself\); try again in \d+ s$/);
    expect((await get(port, `${apiPaths.join}/challenge`, '127.0.0.6', 'POST')).status).toBe(429);
    expect((await get(port, apiPaths.join, '127.0.0.7', 'POST')).status).not.toBe(429);
    expect((await get(port, apiPaths.health, '127.0.0.6')).status).toBe(200);
  });

  it("the agent takes a 429 to its join as a reason to wait and retry, not a refusal", async () => {
    const { url } = await start({ joinRateLimit: { burst: 1, perSecond: 0.01, exempt: () => false } });
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const client = new CoordinatorClient(url, JOIN);
    client.useIdentity({ publicKey: publicKey.export({ format: 'jwk' }).x!, fingerprint: '', sign: (data) => sign(null, Buffer.from(data), privateKey).toString('base64url') });
    const join = (advertiseHost: string) => ({ node: 'box', agentVersion: 't', machineId: 'm'.repeat(24), gpus: [], cpuCores: 1, ramMb: 1, advertiseHost, rdzvPort: 29500, python: null });
    const error = await joinOnce(client, join).then(
      () => null,
      (e: unknown) => e,
    );
    client.close();
    expect(error).toBeInstanceOf(JoinError);
    expect(error).toMatchObject({ kind: 'unreachable', message: expect.stringContaining('asks this worker to slow down (429: too many join requests from 127.0.0.1') });
  });

  it('leaves loopback joins unlimited by default (the app\'s own worker)', async () => {
    const { port } = await start({});
    for (let i = 0; i < 15; i++) expect((await get(port, apiPaths.join, '127.0.0.1', 'POST')).status).not.toBe(429);
  });
});
