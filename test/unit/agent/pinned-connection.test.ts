import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { CoordinatorClient } from '../../../src-main/agent/coordinator-client';
import { PresenceLink } from '../../../src-main/agent/presence-link';
import { loadOrCreateTlsIdentity, type TlsIdentity } from '../../../src-main/platform/tls-identity';
import { PRESENCE_CLOSE } from '../../../src-shared/worker-protocol';
import { waitFor } from './fake-coordinator';

let dir: string;
let identity: TlsIdentity;
let impostor: TlsIdentity;
let server: https.Server;
let base: string;
const requests: { url: string; auth: string | undefined }[] = [];
const closes: number[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-pin-'));
  identity = await loadOrCreateTlsIdentity(path.join(dir, 'real'));
  impostor = await loadOrCreateTlsIdentity(path.join(dir, 'impostor'));
  server = https.createServer({ cert: identity.certPem, key: identity.keyPem }, (req, res) => {
    requests.push({ url: req.url ?? '', auth: req.headers.authorization });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('close', (code) => closes.push(code)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('a pinned coordinator client', () => {
  it('talks to the server whose certificate has the pinned fingerprint, in any common spelling', async () => {
    const colons = identity.fingerprint256.toUpperCase().match(/../g)!.join(':');
    const c = new CoordinatorClient(base, 'tok', { certSha256: colons });
    expect(await c.post('/v1/join', {})).toEqual({ kind: 'ok', status: 200, body: { ok: true } });
    expect(await c.post('/v1/workers/1/heartbeat', {})).toMatchObject({ kind: 'ok' }); // over the kept-alive socket
    expect(requests.at(-1)).toEqual({ url: '/v1/workers/1/heartbeat', auth: undefined });
    c.close();
  });

  it('sends not one byte to a server with another certificate, and names both fingerprints', async () => {
    // A raw TLS server, so every byte after the handshake is counted (an https server would hide a partial request).
    let bytes = 0;
    const fake = tls.createServer({ cert: impostor.certPem, key: impostor.keyPem }, (socket) => {
      socket.on('data', (d) => (bytes += d.length));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    const port = (fake.address() as AddressInfo).port;
    try {
      const c = new CoordinatorClient(`https://127.0.0.1:${port}`, 'secret-token', { certSha256: identity.fingerprint256 });
      const reply = await c.post('/v1/join', { node: 'a' });
      expect(reply.kind).toBe('untrusted');
      const message = reply.kind === 'untrusted' ? reply.message : '';
      expect(message).toContain(`this is not the coordinator you were given: 127.0.0.1:${port} showed a certificate with SHA-256 fingerprint ${impostor.fingerprint256}`);
      expect(message).toContain(`the join command says ${identity.fingerprint256}`);
      await new Promise((r) => setTimeout(r, 100));
      expect(bytes).toBe(0);
    } finally {
      await new Promise((r) => fake.close(r));
    }
  });

  it('the presence WebSocket goes over the same pinned connection (wss), and refuses another certificate', async () => {
    const c = new CoordinatorClient(base, 'tok', { certSha256: identity.fingerprint256 });
    const url = new URL(`${base.replace('https', 'wss')}/v1/workers/1/presence`);
    const logs: string[] = [];
    const link = new PresenceLink({ url, headers: () => c.authHeaders(), connector: c.connector, heartbeatTimeoutMs: () => 5000, onRefused: () => undefined, log: (l) => logs.push(l) });
    link.start();
    await waitFor('the wss link', () => link.isOpen());
    await link.close('bye');
    await waitFor('the BYE at the server', () => closes.includes(PRESENCE_CLOSE.BYE));

    const wrong = new CoordinatorClient(base, 'tok', { certSha256: impostor.fingerprint256 });
    const bad = new PresenceLink({ url, headers: () => wrong.authHeaders(), connector: wrong.connector, heartbeatTimeoutMs: () => 5000, onRefused: () => undefined, log: (l) => logs.push(l) });
    const before = closes.length;
    bad.start();
    await waitFor('the refusal in the log', () => logs.some((l) => l.includes('this is not the coordinator you were given')));
    expect(bad.isOpen()).toBe(false);
    await bad.close('done');
    expect(closes.length).toBe(before);
  });
});
