// Signed worker requests over the real HTTP API: a valid signature passes; a changed body or path, a replayed
// nonce, an old or future time, and a missing signature are each refused with a 401 that says which check failed.
import { describe, expect, it } from 'vitest';
import { CoordinatorClient } from '../../../src-main/agent/coordinator-client';
import { challengeCoordinator } from '../../../src-main/agent/coordinator-proof';
import { apiPaths, joinResponseSchema } from '../../../src-shared/worker-protocol';
import { JOIN, joinBody, newIdentity, send, startCoordinator } from './identity-fixture';

async function joinedSigned() {
  const { svc, api } = await startCoordinator();
  const identity = newIdentity();
  const joined = await send(api, { path: apiPaths.join, body: JSON.stringify(joinBody('gpu-box', { publicKey: identity.publicKey })), identity });
  expect(joined.status, joined.error).toBe(200);
  const session = joinResponseSchema.parse(joined.json);
  const beat = (extra: Partial<Parameters<typeof send>[1]> = {}) =>
    send(api, { path: apiPaths.heartbeat(session.workerId), body: JSON.stringify({ incarnation: 1 }), session: session.sessionSecret, identity, ...extra });
  return { svc, api, identity, session, beat };
}

describe('signed requests', () => {
  it('pins the key of the first signed join and accepts requests signed by it', async () => {
    const { svc, identity, beat } = await joinedSigned();
    expect((await beat()).status).toBe(200);
    expect(svc.workers()[0]).toMatchObject({ node: 'gpu-box', state: 'active', keyFingerprint: identity.fingerprint });
  });

  it('the agent\'s client signs every request once it has the node key, the join included', async () => {
    const { svc, api } = await startCoordinator();
    const identity = newIdentity();
    const client = new CoordinatorClient(api.url, JOIN);
    client.useIdentity(identity);
    // The join answers the coordinator's challenge first (join-proof.ts).
    const challenge = await challengeCoordinator(client);
    if (challenge.kind !== 'proved') throw new Error('the coordinator did not prove the join token');
    const joined = await client.call('join', [], joinBody('client-node'), undefined, challenge.headers);
    expect(joined.kind).toBe('ok');
    const session = joinResponseSchema.parse((joined as { body: unknown }).body);
    client.useSession(session.sessionSecret);
    expect((await client.call('heartbeat', [session.workerId], { incarnation: 1 })).kind).toBe('ok');
    expect(svc.nodeKeys.get('client-node')?.publicKey).toBe(identity.publicKey);
    // The same client without its key is an impostor now.
    client.useIdentity(null);
    const unsigned = await client.call('heartbeat', [session.workerId], { incarnation: 1 });
    expect(unsigned).toMatchObject({ kind: 'http-error', status: 401 });
    expect((unsigned as { message: string }).message).toContain('not signed');
    client.close();
  });

  it('refuses a body or path changed after signing', async () => {
    const { beat, session } = await joinedSigned();
    const tamperedBody = await beat({ signAs: { body: JSON.stringify({ incarnation: 2 }) } });
    expect(tamperedBody.status).toBe(401);
    expect(tamperedBody.error).toContain('bad signature');
    const tamperedPath = await beat({ signAs: { path: apiPaths.report(session.workerId) } });
    expect(tamperedPath.status).toBe(401);
    expect(tamperedPath.error).toContain('bad signature');
  });

  it('refuses a signature by another key', async () => {
    const { beat } = await joinedSigned();
    const other = await beat({ identity: newIdentity('machine-b') });
    expect(other.status).toBe(401);
    expect(other.error).toContain('not signed by the pinned node key of gpu-box');
  });

  it('refuses a replayed request (the same nonce again)', async () => {
    const { api, beat, session } = await joinedSigned();
    const first = await beat();
    expect(first.status).toBe(200);
    const replay = await send(api, { path: apiPaths.heartbeat(session.workerId), body: JSON.stringify({ incarnation: 1 }), headers: first.headers });
    expect(replay.status).toBe(401);
    expect(replay.error).toContain('replayed request');
  });

  it('refuses expired and future timestamps, saying by how much', async () => {
    const { beat } = await joinedSigned();
    const old = await beat({ signAs: { time: Date.now() - 90_000 } });
    expect(old.status).toBe(401);
    expect(old.error).toMatch(/is 9\d s old, outside the ±60 s window: check the clocks/);
    const future = await beat({ signAs: { time: Date.now() + 90_000 } });
    expect(future.status).toBe(401);
    expect(future.error).toContain('s in the future');
    expect((await beat({ signAs: { time: Date.now() - 50_000 } })).status).toBe(200);
  });

  it('refuses an unsigned request, and an unsigned join, for a node whose key is pinned', async () => {
    const { api, beat, session } = await joinedSigned();
    const unsigned = await beat({ identity: undefined });
    expect(unsigned.status).toBe(401);
    expect(unsigned.error).toContain('has a pinned node key, but this request is not signed');
    const rejoin = await send(api, { path: apiPaths.join, body: JSON.stringify(joinBody('gpu-box')) });
    expect(rejoin.status).toBe(401);
    expect((await beat()).status).toBe(200); // the real node is unaffected
    expect(session.workerId).toBe(0);
  });

  it('lets an older agent (no key) join and work unsigned, shown without a fingerprint', async () => {
    const { svc, api } = await startCoordinator();
    const joined = await send(api, { path: apiPaths.join, body: JSON.stringify(joinBody('old-agent')) });
    expect(joined.status).toBe(200);
    const session = joinResponseSchema.parse(joined.json);
    expect((await send(api, { path: apiPaths.heartbeat(session.workerId), body: JSON.stringify({ incarnation: 1 }), session: session.sessionSecret })).status).toBe(200);
    expect(svc.workers()[0]!.keyFingerprint).toBeUndefined();
  });
});
