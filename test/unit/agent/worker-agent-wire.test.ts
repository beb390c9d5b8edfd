/** The agent's side of the wire: session secrets, machine id, presence link, pinned TLS, distrust of answers. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findFreePort } from '../../../src-main/agent/coordinator-client';
import { JoinError, WorkerAgent, type WorkerAgentOptions } from '../../../src-main/agent/worker-agent';
import { loadOrCreateTlsIdentity, type TlsIdentity } from '../../../src-main/platform/tls-identity';
import { PRESENCE_CLOSE } from '../../../src-shared/worker-protocol';
import { agentOptions, cpuOnlyHardware } from './agent-fixtures';
import { FakeCoordinator, waitFor } from './fake-coordinator';

const TOKEN = 'join-token-for-wire-tests';
const hardware = cpuOnlyHardware;

let coordinator: FakeCoordinator;
let url: string;
let dataDir: string;
let agent: WorkerAgent | null;
const logs: string[] = [];

beforeEach(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'gpu-share-wire-'));
  agent = null;
  logs.length = 0;
});
afterEach(async () => {
  if (agent) await agent.stop('test over');
  await coordinator.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function makeAgent(extra: Partial<WorkerAgentOptions> = {}): WorkerAgent {
  agent = new WorkerAgent(agentOptions({ coordinatorUrl: url, dataDir, logs }, { token: TOKEN, detect: async () => hardware, ...extra }));
  return agent;
}

async function plainCoordinator(): Promise<void> {
  coordinator = new FakeCoordinator(TOKEN, 100, 500);
  url = await coordinator.listen();
}

describe('WorkerAgent on the wire (http)', () => {
  beforeEach(plainCoordinator);

  it('joins with its machine id and sends the session secret with every later request', async () => {
    await makeAgent().start();
    const kept = readFileSync(path.join(dataDir, 'machine-id'), 'utf8').trim();
    expect(coordinator.joins[0]!.body.machineId).toBe(kept);
    await waitFor('heartbeats', () => coordinator.heartbeats.length >= 3);
    expect(coordinator.sessionRefusals).toBe(0);
    expect(logs.join('\n')).not.toContain(kept); // a secret: never logged
  });

  it('keeps a presence link open for the session and says BYE on it before the leave', async () => {
    await makeAgent().start();
    await waitFor('the presence link', () => coordinator.openPresence().length === 1);
    expect(coordinator.presence[0]).toMatchObject({ workerId: 7, session: coordinator.session });
    await agent!.stop('user pressed Ctrl-C');
    const order = coordinator.requestLog.filter((r) => r.startsWith('PRESENCE-CLOSE') || r.includes('/leave'));
    expect(order).toEqual([`PRESENCE-CLOSE ${PRESENCE_CLOSE.BYE}`, 'POST /v1/workers/7/leave']);
    expect(coordinator.presence[0]!.closeReason).toBe('user pressed Ctrl-C');
    expect(coordinator.leaves).toHaveLength(1);
  });

  it('a 401 on a heartbeat (the session is gone) means lost: it joins again with a new session', async () => {
    await makeAgent().start();
    await waitFor('the presence link', () => coordinator.openPresence().length === 1);
    coordinator.sessions.push('revoked-by-the-test-0123456789'); // the agent's secret is no longer the valid one
    await waitFor('a second join', () => coordinator.joins.length === 2, 5000);
    await waitFor('the agent to be joined again', () => agent!.status().phase === 'joined', 5000);
    expect(logs.some((l) => l.startsWith('lost the coordinator: the coordinator no longer knows this session (401'))).toBe(true);
    await waitFor('a presence link of the new session', () => coordinator.openPresence().some((p) => p.session === coordinator.session), 5000);
    const sessionsBefore = coordinator.sessionRefusals;
    await waitFor('heartbeats of incarnation 2', () => coordinator.heartbeats.some((h) => h.body.incarnation === 2));
    expect(coordinator.sessionRefusals).toBe(sessionsBefore);
  });

  it('a presence link closed with REFUSED means the session is gone: lost, then joined again', async () => {
    await makeAgent().start();
    await waitFor('the presence link', () => coordinator.openPresence().length === 1);
    coordinator.presence[0]!.socket.close(PRESENCE_CLOSE.REFUSED, 'unknown session');
    await waitFor('a second join', () => coordinator.joins.length === 2, 5000);
    expect(logs.some((l) => l.startsWith('lost the coordinator: the coordinator ended this session (unknown session)'))).toBe(true);
  });

  it('a 200 that is not a heartbeat answer counts as a failed heartbeat', async () => {
    await makeAgent().start();
    coordinator.mode = 'html-200';
    await waitFor('the loss', () => logs.some((l) => l.startsWith('lost the coordinator: no successful heartbeat')), 5000);
    expect(logs.find((l) => l.startsWith('lost the coordinator'))).toMatch(/last answer: .*not JSON/);
  });

  it('start() refuses a wrong token with a message saying where the token is', async () => {
    const a = makeAgent({ token: 'wrong' });
    agent = null;
    const error = await a.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JoinError);
    expect((error as JoinError).kind).toBe('unauthorized');
    expect((error as JoinError).message).toMatch(/does not hold your join token \(401\): nothing about this machine was sent to it.*"Add a worker" panel.*gpu-share serve/);
  });

  it('start() says clearly when nothing listens at the URL', async () => {
    await coordinator.close();
    const a = makeAgent();
    agent = null;
    coordinator = new FakeCoordinator(TOKEN);
    await coordinator.listen();
    const error = await a.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JoinError);
    expect((error as JoinError).kind).toBe('unreachable');
    expect((error as JoinError).message).toMatch(/cannot reach the coordinator at http:\/\/127\.0\.0\.1:\d+: nothing is listening .*connection refused/);
  });

  it('start() passes on a refusal (a full cluster) as it came', async () => {
    coordinator.joinStatus = 409;
    const a = makeAgent();
    agent = null;
    const error = await a.start().catch((e: unknown) => e);
    expect((error as JoinError).kind).toBe('refused');
    expect((error as JoinError).message).toContain('join refused with 409');
  });

  it('with retryFirstJoin, waits for a coordinator that answers 5xx at first, logging the failure once', async () => {
    coordinator.failJoins = 2;
    const joined = await makeAgent({ retryFirstJoin: true }).start();
    expect(joined.workerId).toBe(7);
    expect(logs.filter((l) => l.includes('retrying in'))).toEqual([
      'the coordinator at http://127.0.0.1:' + new URL(url).port + ' failed to answer the join (503: coordinator starting) — retrying in 1 s, and on until it answers (Ctrl-C to stop)',
    ]);
  }, 10_000);

  it('stop() ends the wait of a first join that keeps retrying', async () => {
    const port = await findFreePort();
    const a = makeAgent({ retryFirstJoin: true, coordinatorUrl: `http://127.0.0.1:${port}` });
    agent = null;
    const starting = a.start().catch((e: unknown) => e);
    await waitFor('the first retry', () => logs.some((l) => l.includes('retrying in 1 s')));
    const began = Date.now();
    await a.stop('the user gave up');
    const error = await starting;
    expect(error).toBeInstanceOf(JoinError);
    expect(Date.now() - began).toBeLessThan(900);
  });
});

describe('WorkerAgent on the wire (https, pinned)', () => {
  let tlsDir: string;
  let identity: TlsIdentity;
  let other: TlsIdentity;
  beforeAll(async () => {
    tlsDir = mkdtempSync(path.join(tmpdir(), 'gpu-share-wire-tls-'));
    identity = await loadOrCreateTlsIdentity(path.join(tlsDir, 'a'));
    other = await loadOrCreateTlsIdentity(path.join(tlsDir, 'b'));
  });
  afterAll(() => rmSync(tlsDir, { recursive: true, force: true }));
  beforeEach(async () => {
    coordinator = new FakeCoordinator(TOKEN, 100, 500, identity);
    url = await coordinator.listen();
  });

  it('joins, heartbeats and keeps its presence link over the pinned connection', async () => {
    await makeAgent({ certSha256: identity.fingerprint256 }).start();
    await waitFor('heartbeats', () => coordinator.heartbeats.length >= 2);
    await waitFor('the wss presence link', () => coordinator.openPresence().length === 1);
    await agent!.stop('done');
    expect(coordinator.presence[0]!.closeCode).toBe(PRESENCE_CLOSE.BYE);
  });

  it('refuses a coordinator with another certificate before sending anything', async () => {
    const a = makeAgent({ certSha256: other.fingerprint256 });
    agent = null;
    const error = (await a.start().catch((e: unknown) => e)) as JoinError;
    expect(error.kind).toBe('untrusted');
    expect(error.message).toContain(`this is not the coordinator you were given: 127.0.0.1:${new URL(url).port} showed a certificate with SHA-256 fingerprint ${identity.fingerprint256}`);
    expect(coordinator.requestLog).toEqual([]);
  });

  it('refuses an https URL without a fingerprint, saying to copy the join command', async () => {
    const a = makeAgent();
    agent = null;
    const error = (await a.start().catch((e: unknown) => e)) as JoinError;
    expect(error.kind).toBe('untrusted');
    expect(error.message).toMatch(/copy the whole join command/);
    expect(coordinator.requestLog).toEqual([]);
  });
});
