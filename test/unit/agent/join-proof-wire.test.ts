/**
 * The agent's join proof on the wire (issue 14, item 1): the join token never crosses it, and a server that cannot
 * prove it holds the token — a rogue with its own certificate, a relay in front of the real coordinator, one that
 * holds another token — gets nothing about this machine: no join, no node name, no machine id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { proveCoordinator } from '../../../src-main/agent/coordinator-proof';
import { JoinError, WorkerAgent } from '../../../src-main/agent/worker-agent';
import { loadOrCreateTlsIdentity, type TlsIdentity } from '../../../src-main/platform/tls-identity';
import { nodePtySpawner } from '../../../src-main/platform/pty/node-pty-spawner';
import { cpuOnlyHardware } from './agent-fixtures';
import { FakeCoordinator, waitFor } from './fake-coordinator';

const TOKEN = 'join-token-for-proof-tests-0123456789abc';
const NODE = 'node-name-that-must-not-leak';
const hardware = cpuOnlyHardware;

let dir: string;
let tlsA: TlsIdentity;
let tlsB: TlsIdentity;
let server: FakeCoordinator | null = null;
let agent: WorkerAgent | null = null;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-proof-'));
  tlsA = await loadOrCreateTlsIdentity(path.join(dir, 'a'));
  tlsB = await loadOrCreateTlsIdentity(path.join(dir, 'b'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  agent = null;
  server = null;
});
afterEach(async () => {
  if (agent) await agent.stop('test over');
  if (server) await server.close();
});

function makeAgent(url: string, certSha256?: string): WorkerAgent {
  agent = new WorkerAgent({
    coordinatorUrl: url,
    token: TOKEN,
    name: NODE,
    dataDir: mkdtempSync(path.join(dir, 'agent-')),
    pty: nodePtySpawner,
    detect: async () => hardware,
    findPython: async () => null,
    log: () => undefined,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stopGraceMs: 300,
    ...(certSha256 ? { certSha256 } : {}),
  });
  return agent;
}

/** Everything the server received, headers and bodies, as one text. */
const everything = (s: FakeCoordinator): string => JSON.stringify(s.rawRequests);

function expectNothingUsable(s: FakeCoordinator): void {
  const seen = everything(s);
  expect(seen).not.toContain(TOKEN);
  expect(seen).not.toContain(NODE);
  expect(s.rawRequests.filter((r) => r.url === '/v1/join')).toEqual([]);
  expect(s.joins).toEqual([]);
  // Only the challenge: a nonce, the token's id, the node key.
  expect(s.rawRequests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/join/challenge']);
}

async function refusal(a: WorkerAgent): Promise<JoinError> {
  const error = await a.start().catch((e: unknown) => e);
  agent = null;
  expect(error).toBeInstanceOf(JoinError);
  return error as JoinError;
}

describe('the join proof on the wire', () => {
  it('joins a coordinator that proves the token, and never sends the token on any request', async () => {
    server = new FakeCoordinator(TOKEN, 100, 500, tlsA);
    const url = await server.listen();
    await makeAgent(url, tlsA.fingerprint256).start();
    await waitFor('heartbeats and the presence link', () => server!.heartbeats.length >= 2 && server!.openPresence().length === 1);
    expect(server.joins).toHaveLength(1);
    expect(server.rawRequests[0]!.url).toBe('/v1/join/challenge');
    expect(everything(server)).not.toContain(TOKEN);
    expect(server.rawRequests.every((r) => r.headers.authorization === undefined)).toBe(true);
  });

  it('refuses a server with the pinned certificate that cannot prove the token, and sends it nothing usable', async () => {
    server = new FakeCoordinator(TOKEN, 100, 500, tlsB);
    server.forgeProof = true;
    const url = await server.listen();
    const error = await refusal(makeAgent(url, tlsB.fingerprint256));
    expect(error.kind).toBe('untrusted');
    expect(error.message).toMatch(new RegExp(`the server at ${url.replace(/[.]/g, '\\.')} could not prove it holds your cluster's join token: nothing was sent to it`));
    expectNothingUsable(server);
  });

  it('refuses a relay that holds the token but not the certificate the worker pinned (the proof binds the fingerprint)', async () => {
    server = new FakeCoordinator(TOKEN, 100, 500, tlsB);
    server.proveAsCertificate(tlsA.fingerprint256); // the genuine coordinator's proof, relayed
    const url = await server.listen();
    const error = await refusal(makeAgent(url, tlsB.fingerprint256));
    expect(error.kind).toBe('untrusted');
    expectNothingUsable(server);
  });

  it('learns that a coordinator holds another token without sending anything about the machine', async () => {
    server = new FakeCoordinator('another-clusters-token-zzzzzzzzzzzzzzz', 100, 500);
    const url = await server.listen();
    const error = await refusal(makeAgent(url));
    expect(error.kind).toBe('unauthorized');
    expect(error.message).toMatch(/does not hold your join token/);
    expectNothingUsable(server);
  });

  it('proveCoordinator says which servers prove the token', async () => {
    server = new FakeCoordinator(TOKEN, 100, 500, tlsA);
    const url = await server.listen();
    expect(await proveCoordinator({ url, certSha256: tlsA.fingerprint256, token: TOKEN })).toEqual({ ok: true });
    expect(await proveCoordinator({ url, certSha256: tlsA.fingerprint256, token: 'not-the-token-yyyyyyyyyyyyyyyyyyy' })).toMatchObject({ ok: false, message: expect.stringMatching(/does not hold your join token/) });
    server.forgeProof = true;
    expect(await proveCoordinator({ url, certSha256: tlsA.fingerprint256, token: TOKEN })).toMatchObject({ ok: false, message: expect.stringMatching(/could not prove/) });
    expect(everything(server)).not.toContain(TOKEN);
  });

  it('takes a new challenge once when the join finds its challenge gone (evicted by a flood), then says why', async () => {
    server = new FakeCoordinator(TOKEN, 100, 500);
    const url = await server.listen();
    server.loseChallenges = 1;
    await makeAgent(url).start();
    expect(server.joins).toHaveLength(1);
    expect(server.rawRequests.map((r) => r.url).slice(0, 4)).toEqual(['/v1/join/challenge', '/v1/join', '/v1/join/challenge', '/v1/join']);
    await agent!.stop('next case');
    agent = null;
    server.loseChallenges = 2;
    const error = await refusal(makeAgent(url));
    expect(error.kind).toBe('unauthorized');
    expect(error.message).toMatch(/unknown, expired or already used join challenge/);
  });

  it('says so when the server knows no join challenge (an older coordinator, or not one at all)', async () => {
    const http = await import('node:http');
    const seen: string[] = [];
    const old = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `no endpoint ${req.url}` }));
    });
    await new Promise<void>((r) => old.listen(0, '127.0.0.1', r));
    try {
      const port = (old.address() as { port: number }).port;
      const error = await refusal(makeAgent(`http://127.0.0.1:${port}`));
      expect(error.kind).toBe('protocol');
      expect(error.message).toMatch(/does not know the join challenge \(404\): it is not a GPU Share coordinator of this version/);
      expect(seen).toEqual(['POST /v1/join/challenge ']);
    } finally {
      old.closeAllConnections();
      await new Promise((r) => old.close(r));
    }
  });
});
