/**
 * Join-token rotation over the real API (issue 14, item 1): POST /v1/join-token/rotate makes a new token that the
 * running coordinator takes at once; the replaced one still lets in a machine already approved (its agent holds
 * the old token) but no new machine, which needs the new token.
 */
import { describe, expect, it } from 'vitest';
import { sha256Hex, signatureHeaders } from '../../../src-main/agent/request-signer';
import type { NodeIdentity } from '../../../src-main/agent/node-identity';
import { startCoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { MAX_RETIRED_JOIN_TOKENS, type ClusterSecrets } from '../../../src-main/app/secrets';
import { generateToken } from '../../../src-main/platform/tokens';
import { apiPaths } from '../../../src-shared/worker-protocol';
import { FakeClock } from '../coordinator/fake-clock';
import { joinProofHeaders } from '../api/join-proof-client';
import { joinBody, newIdentity, OPERATOR } from '../identity/identity-fixture';
import { cli } from '../cli/helpers';

async function start() {
  const secrets: ClusterSecrets = { joinToken: generateToken(), operatorToken: OPERATOR, pageToken: generateToken(), retiredJoinTokens: [] };
  const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: secrets.joinToken, operatorToken: OPERATOR });
  const api = await startCoordinatorHttp(svc, {
    host: '127.0.0.1',
    port: 0,
    joinToken: secrets.joinToken,
    joinTokens: () => ({ current: secrets.joinToken, retired: secrets.retiredJoinTokens }),
    // As app-core does, less the file: the old token first among the retired ones.
    rotateJoinToken: async () => {
      secrets.retiredJoinTokens = [secrets.joinToken, ...secrets.retiredJoinTokens].slice(0, MAX_RETIRED_JOIN_TOKENS);
      secrets.joinToken = generateToken();
      return secrets.joinToken;
    },
    operatorToken: OPERATOR,
  });
  return { svc, api, secrets };
}

/** A signed join of `node` with `identity`, proving `token`. */
async function join(url: string, token: string, node: string, identity: NodeIdentity) {
  const body = JSON.stringify(joinBody(node, { publicKey: identity.publicKey }));
  const headers = {
    'content-type': 'application/json',
    ...(await joinProofHeaders(url, token, { nodePublicKey: identity.publicKey })),
    ...signatureHeaders(identity, 'POST', apiPaths.join, sha256Hex(body)),
  };
  const res = await fetch(url + apiPaths.join, { method: 'POST', headers, body });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('join-token rotation', () => {
  it('rotates by the operator API: the old token keeps an approved machine in, and keeps a new machine out', async () => {
    const { api, secrets } = await start();
    try {
      const old = secrets.joinToken;
      const approved = newIdentity('machine-approved');
      expect((await join(api.url, old, 'approved-box', approved)).status).toBe(200); // loopback: approved by construction

      const asWorker = await fetch(`${api.url}/v1/join-token/rotate`, { method: 'POST', headers: { authorization: `Bearer ${old}` } });
      expect(asWorker.status).toBe(403);
      const rotated = await fetch(`${api.url}/v1/join-token/rotate`, { method: 'POST', headers: { authorization: `Bearer ${OPERATOR}` } });
      expect(rotated.status).toBe(200);
      const { joinToken } = (await rotated.json()) as { joinToken: string };
      expect(joinToken).toBe(secrets.joinToken);
      expect(joinToken).not.toBe(old);

      // The machine already approved still joins with the token its agent holds.
      expect((await join(api.url, old, 'approved-box', approved)).status).toBe(200);
      // A new machine with the old token: its challenge is answered (it holds a token this coordinator issued) but
      // the join is refused, saying why.
      const stranger = await join(api.url, old, 'new-box', newIdentity('machine-new'));
      expect(stranger.status).toBe(401);
      expect(String(stranger.json.error)).toMatch(/was replaced \(gpu-share token rotate\) and lets in only machines already approved; new-box is not one/);
      // The approved machine's key under another name is no approval for that name either.
      expect((await join(api.url, old, 'other-name', approved)).status).toBe(401);
      // The new token lets the new machine in.
      expect((await join(api.url, joinToken, 'new-box', newIdentity('machine-new-2'))).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('a token older than the kept retired ones is not held at all', async () => {
    const { api, secrets } = await start();
    try {
      const first = secrets.joinToken;
      for (let i = 0; i <= MAX_RETIRED_JOIN_TOKENS; i += 1) {
        await fetch(`${api.url}/v1/join-token/rotate`, { method: 'POST', headers: { authorization: `Bearer ${OPERATOR}` } });
      }
      expect(secrets.retiredJoinTokens).not.toContain(first);
      expect(await joinProofHeaders(api.url, first)).toEqual({}); // the challenge is refused: 401, not held
    } finally {
      await api.close();
    }
  });

  it('gpu-share token rotate replaces it through the operator API and prints the new token', async () => {
    const { api, secrets } = await start();
    try {
      const old = secrets.joinToken;
      const r = await cli(['token', 'rotate', '--url', api.url], { GPU_SHARE_OPERATOR_TOKEN: OPERATOR });
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(secrets.joinToken).not.toBe(old);
      expect(secrets.retiredJoinTokens).toEqual([old]);
      expect(r.out).toContain(`New join token: ${secrets.joinToken}`);
      expect(r.out).toContain('Machines already approved keep working');
      const json = await cli(['token', 'rotate', '--url', api.url, '--json'], { GPU_SHARE_OPERATOR_TOKEN: OPERATOR });
      expect(JSON.parse(json.out)).toEqual({ joinToken: secrets.joinToken });
      const refused = await cli(['token', 'rotate', '--url', api.url], { GPU_SHARE_OPERATOR_TOKEN: secrets.joinToken });
      expect(refused.code).not.toBe(0);
      expect(refused.err).toMatch(/operator token/);
    } finally {
      await api.close();
    }
  });
});
