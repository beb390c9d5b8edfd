/**
 * The coordinator refuses every join that does not answer a fresh challenge with the right proof (issue 14,
 * item 1): no proof, a bearer token instead, a wrong proof, a reused challenge, another key than the challenged one.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { joinKey, joinNonce, tokenId } from '../../../src-main/platform/join-proof';
import { apiPaths, JOIN_CHALLENGE_HEADER, JOIN_PROOF_HEADER } from '../../../src-shared/worker-protocol';
import { FakeClock } from '../coordinator/fake-clock';
import { joinProofHeaders } from '../api/join-proof-client';
import { joinBody, newIdentity } from '../identity/identity-fixture';

const JOIN = 'join-' + 'g'.repeat(30);
const OPERATOR = 'op-' + 'h'.repeat(30);
let svc: CoordinatorService;
let api: CoordinatorHttp;

beforeEach(async () => {
  svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
  api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR });
});
afterEach(async () => {
  await api.close();
});

async function post(path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(api.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('join authentication', () => {
  it('answers a challenge only for a token it holds', async () => {
    const unknown = await post('/v1/join/challenge', { workerNonce: joinNonce(), tokenId: tokenId('not-this-token-iiiiiiiiiiiii') }, {});
    expect(unknown).toMatchObject({ status: 401, json: { error: expect.stringMatching(/^this coordinator does not hold your join token/) } });
    const known = await post('/v1/join/challenge', { workerNonce: joinNonce(), tokenId: tokenId(JOIN) }, {});
    expect(known.status).toBe(200);
    expect(known.json).toEqual({ challengeId: expect.any(String), coordinatorNonce: expect.any(String), proof: expect.any(String) });
    // The key itself, or anything derived from it but the proof, is not in the answer.
    expect(JSON.stringify(known.json)).not.toContain(joinKey(JOIN).toString('base64url'));
  });

  it('refuses a join with the join token as a bearer token, without a proof, or with a wrong proof', async () => {
    expect((await post(apiPaths.join, joinBody('a'), { authorization: `Bearer ${JOIN}` })).json.error).toMatch(/^a join must answer a challenge/);
    const good = await joinProofHeaders(api.url, JOIN);
    const wrong = await post(apiPaths.join, joinBody('a'), { ...good, [JOIN_PROOF_HEADER]: good[JOIN_PROOF_HEADER]!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) });
    expect(wrong).toMatchObject({ status: 401, json: { error: expect.stringMatching(/^the join proof does not match the challenge/) } });
    // The challenge was taken by the failed try: the right proof for it comes too late.
    expect((await post(apiPaths.join, joinBody('a'), good)).json.error).toMatch(/unknown, expired or already used/);
    expect(svc.workers()).toHaveLength(0);
  });

  it('takes each challenge once', async () => {
    const headers = await joinProofHeaders(api.url, JOIN);
    expect((await post(apiPaths.join, joinBody('a'), headers)).status).toBe(200);
    const again = await post(apiPaths.join, joinBody('b'), headers);
    expect(again).toMatchObject({ status: 401, json: { error: expect.stringMatching(/already used/) } });
    expect(svc.workers().map((w) => w.node)).toEqual(['a']);
  });

  it('refuses a join that presents another node key than its challenge named', async () => {
    const challenged = newIdentity('machine-one');
    const other = newIdentity('machine-two');
    const headers = await joinProofHeaders(api.url, JOIN, { nodePublicKey: challenged.publicKey });
    const r = await post(apiPaths.join, joinBody('a', { publicKey: other.publicKey }), headers);
    expect(r).toMatchObject({ status: 401, json: { error: expect.stringMatching(/another node key than its challenge named/) } });
    expect(r.json.error).not.toContain(JOIN);
    expect(headers[JOIN_CHALLENGE_HEADER]).toBeDefined();
  });
});
