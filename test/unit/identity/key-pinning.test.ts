// Key pinning: a node that comes back with another key is held back until the person accepts it, and the pin
// (and a held-back key) outlive a restart of the coordinator because they are kept in state.db.
import { describe, expect, it } from 'vitest';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { fingerprintOf } from '../../../src-main/core/coordinator/membership/node-keys';
import { apiPaths, joinResponseSchema } from '../../../src-shared/worker-protocol';
import { closeTemp, openTemp, tempDataDir } from '../state/temp-state';
import { FakeClock } from '../coordinator/fake-clock';
import { JOIN, joinBody, newIdentity, OPERATOR, send, startCoordinator, signedJoin } from './identity-fixture';

describe('key pinning', () => {
  it('holds back a join with a new key until it is accepted, then the new key speaks for the node and the old one not', async () => {
    const { svc, api } = await startCoordinator();
    const oldKey = newIdentity('machine-a');
    const newKey = newIdentity('machine-a-reinstalled');
    const first = await signedJoin(api, 'gpu-box', oldKey);
    expect(first.status).toBe(200);

    const held = await signedJoin(api, 'gpu-box', newKey);
    expect(held.status).toBe(409);
    expect(held.error).toBe(
      `node gpu-box presents a new key (fingerprint ${newKey.fingerprint}; the pinned one is ${oldKey.fingerprint}); ` +
        `accept it in the Workers view or with \`gpu-share workers accept-key gpu-box --key ${newKey.fingerprint}\``,
    );
    expect(svc.workers()[0]).toMatchObject({ keyFingerprint: oldKey.fingerprint, keyHeldBack: { fingerprint: newKey.fingerprint } });
    // The old key still works until the person decides.
    const session = joinResponseSchema.parse(first.json);
    expect((await send(api, { path: apiPaths.heartbeat(session.workerId), body: '{"incarnation":1}', session: session.sessionSecret, identity: oldKey })).status).toBe(200);

    expect(svc.nodeKeys.accept('gpu-box', newKey.fingerprint).publicKey).toBe(newKey.publicKey);
    expect(svc.workers()[0]!.keyFingerprint).toBe(newKey.fingerprint);
    expect(svc.workers()[0]!.keyHeldBack).toBeUndefined();
    expect((await signedJoin(api, 'gpu-box', newKey)).status).toBe(200);
    expect((await signedJoin(api, 'gpu-box', oldKey)).status).toBe(409);
  });

  it('records no new key from a join that its key did not sign', async () => {
    const { svc, api } = await startCoordinator();
    const real = newIdentity('machine-a');
    const claimed = newIdentity('machine-x');
    expect((await signedJoin(api, 'gpu-box', real)).status).toBe(200);
    const forged = await send(api, { path: apiPaths.join, body: JSON.stringify(joinBody('gpu-box', { publicKey: claimed.publicKey })), identity: real });
    expect(forged.status).toBe(401);
    expect(svc.nodeKeys.get('gpu-box')?.pending).toBeNull();
    expect(() => svc.nodeKeys.accept('gpu-box', claimed.fingerprint)).toThrow('has no new key waiting to be accepted');
  });

  it('keeps the approval across a restart of the coordinator (state.db), but no held-back key: that is memory only, bounded', async () => {
    const dir = tempDataDir();
    const key = newIdentity('machine-a');
    const other = newIdentity('machine-b');
    const boot = async () => {
      const db = openTemp(dir);
      const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
      svc.nodeKeys.useStore(db.nodeKeys);
      return { db, ...(await startCoordinator(svc)) };
    };
    const before = await boot();
    expect((await signedJoin(before.api, 'gpu-box', key)).status).toBe(200);
    expect((await signedJoin(before.api, 'gpu-box', other)).status).toBe(409);
    await before.api.close();
    closeTemp(before.db);

    const after = await boot();
    expect(after.svc.nodeKeys.get('gpu-box')).toMatchObject({ publicKey: key.publicKey, pending: null });
    const unsigned = await send(after.api, { path: apiPaths.join, body: JSON.stringify(joinBody('gpu-box')) });
    expect(unsigned.status).toBe(401);
    expect((await signedJoin(after.api, 'gpu-box', key)).status).toBe(200);
    expect((await signedJoin(after.api, 'gpu-box', other)).status).toBe(409);
    after.svc.nodeKeys.accept('gpu-box', other.fingerprint);
    await after.api.close();
    closeTemp(after.db);

    const third = openTemp(dir);
    expect(third.nodeKeys.list()).toEqual([expect.objectContaining({ node: 'gpu-box', publicKey: other.publicKey, pending: null })]);
    expect(fingerprintOf(third.nodeKeys.list()[0]!.publicKey)).toBe(other.fingerprint);
  });
});
