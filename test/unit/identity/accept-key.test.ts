// Accepting a held-back key, as a person does it: `gpu-share workers accept-key NAME --key FP` against the real API, and
// the app's acceptNodeKey handler on a real state.db.
import { describe, expect, it } from 'vitest';
import { createIdentityFeature } from '../../../src-main/app/identity-feature';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { cli } from '../cli/helpers';
import { FakeClock } from '../coordinator/fake-clock';
import { openTemp } from '../state/temp-state';
import { JOIN, newIdentity, OPERATOR, signedJoin, startCoordinator } from './identity-fixture';

async function heldBack(svc?: CoordinatorService) {
  const started = await startCoordinator(svc);
  const newKey = newIdentity('machine-new');
  expect((await signedJoin(started.api, 'gpu-box', newIdentity('machine-old'))).status).toBe(200);
  expect((await signedJoin(started.api, 'gpu-box', newKey)).status).toBe(409);
  return { ...started, newKey };
}

describe('accepting a new node key', () => {
  it('gpu-share workers accept-key NAME pins it, and says so; a node with nothing held back is a clear not-found', async () => {
    const { api, newKey } = await heldBack();
    const env = { GPU_SHARE_OPERATOR_TOKEN: OPERATOR };
    const accepted = await cli(['workers', 'accept-key', 'gpu-box', '--key', newKey.fingerprint, '--url', api.url], env);
    expect(accepted.err).toBe('');
    expect(accepted.out).toBe(`Accepted the new key of gpu-box (${newKey.fingerprint}): it may join again now.\n`);
    expect(accepted.code).toBe(0);
    expect((await signedJoin(api, 'gpu-box', newKey)).status).toBe(200);

    const again = await cli(['workers', 'accept-key', 'gpu-box', '--key', newKey.fingerprint, '--url', api.url], env);
    expect(again.code).not.toBe(0);
    expect(again.err).toContain('gpu-box has no new key waiting to be accepted');
    // The join token is not enough to accept a key.
    const asWorker = await cli(['workers', 'accept-key', 'gpu-box', '--key', newKey.fingerprint, '--url', api.url], { GPU_SHARE_OPERATOR_TOKEN: JOIN });
    expect(asWorker.code).not.toBe(0);
  });

  it('the app\'s acceptNodeKey pins the key in state.db and answers the workers with the new fingerprint', async () => {
    const db = openTemp();
    const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
    const feature = createIdentityFeature({ db, coordinator: svc });
    const { newKey } = await heldBack(svc);
    const workers = await feature.handlers.acceptNodeKey({ node: 'gpu-box', fingerprint: newKey.fingerprint });
    expect(workers.find((w) => w.node === 'gpu-box')).toMatchObject({ keyFingerprint: newKey.fingerprint });
    expect(db.nodeKeys.list()[0]).toMatchObject({ publicKey: newKey.publicKey, pending: null });
    await expect(feature.handlers.acceptNodeKey({ node: 'nobody', fingerprint: newKey.fingerprint })).rejects.toThrow('no node named nobody has joined with a key');
  });
});
