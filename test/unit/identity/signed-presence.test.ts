// The presence WebSocket of a node with a pinned key must be signed like its other requests: the agent's client
// signs each upgrade afresh (a nonce is used once), and an unsigned or replayed upgrade is refused.
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CoordinatorClient } from '../../../src-main/agent/coordinator-client';
import { challengeCoordinator } from '../../../src-main/agent/coordinator-proof';
import { presenceUrl } from '../../../src-main/agent/presence-link';
import { joinResponseSchema } from '../../../src-shared/worker-protocol';
import { JOIN, joinBody, newIdentity, startCoordinator } from './identity-fixture';

/** Opens a presence socket with `headers`; resolves with 'open' or the refusal's HTTP status. */
function upgrade(url: URL, headers: Record<string, string>): Promise<'open' | number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close(4001); // RECONNECTING: not a goodbye, the worker stays
      resolve('open');
    });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', () => resolve(-1));
  });
}

describe('signed presence upgrade', () => {
  it('opens when signed by the pinned key; refuses it unsigned or replayed', async () => {
    const { api } = await startCoordinator();
    const client = new CoordinatorClient(api.url, JOIN);
    client.useIdentity(newIdentity());
    // The join answers the coordinator's challenge first (join-proof.ts).
    const challenge = await challengeCoordinator(client);
    if (challenge.kind !== 'proved') throw new Error('the coordinator did not prove the join token');
    const joined = await client.call('join', [], joinBody('presence-node'), undefined, challenge.headers);
    const session = joinResponseSchema.parse((joined as { body: unknown }).body);
    client.useSession(session.sessionSecret);
    const url = presenceUrl(client.base, session.workerId);

    const signed = client.signedGetHeaders(url);
    expect(await upgrade(url, signed)).toBe('open');
    expect(await upgrade(url, signed), 'the same signature again is a replay').toBe(401);
    expect(await upgrade(url, client.authHeaders()), 'unsigned').toBe(401);
    expect(await upgrade(url, client.signedGetHeaders(url)), 'a fresh signature').toBe('open');
    client.close();
    await api.close();
  });
});
