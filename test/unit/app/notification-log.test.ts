// Issue 25 item 4: what the app announced is kept in state.db (the bell's list was empty after a reload), bounded,
// numbered without repeats across restarts (notification ids start again at n1), with what came before the
// database opened kept too; and a machine newly awaiting approval is announced once per node and key.
import { describe, expect, it } from 'vitest';
import { createIdentityFeature } from '../../../src-main/app/identity-feature';
import { MAX_KEPT, NotificationLog, NOTIFICATIONS_KEY } from '../../../src-main/app/notification-log';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import type { NodeIdentity } from '../../../src-main/agent/node-identity';
import { sha256Hex, signatureHeaders } from '../../../src-main/agent/request-signer';
import { SIGNATURE_HEADERS } from '../../../src-shared/worker-protocol';
import type { UserNotification } from '../../../src-shared/training';
import { FakeClock } from '../coordinator/fake-clock';
import { JOIN, joinBody, newIdentity, OPERATOR } from '../identity/identity-fixture';
import { closeTemp, openTemp, tempDataDir } from '../state/temp-state';

const note = (id: string, title = `t${id}`): UserNotification => ({ id, title, body: 'b', severity: 'warning', target: { view: 'workers' } });

describe('the notification log', () => {
  it('survives a restart: the same entries in order, numbers going on, early ones kept', () => {
    const dir = tempDataDir();
    let db = openTemp(dir);
    let log = new NotificationLog();
    log.record(note('early'), 5); // announced before state.db was open
    log.attach(db.kv);
    log.record(note('n1'), 10);
    log.record(note('n2'), 20);
    const before = log.list();
    expect(before.map((r) => [r.seq, r.at, r.notification.id])).toEqual([
      [1, 5, 'early'],
      [2, 10, 'n1'],
      [3, 20, 'n2'],
    ]);
    closeTemp(db);

    db = openTemp(dir);
    log = new NotificationLog();
    log.record(note('warning-at-start'), 30);
    log.attach(db.kv);
    expect(log.list().slice(0, 3)).toEqual(before);
    log.record(note('n1', 'after the restart'), 40);
    expect(log.list().map((r) => [r.seq, r.notification.id, r.notification.title])).toEqual([
      [1, 'early', 'tearly'],
      [2, 'n1', 'tn1'],
      [3, 'n2', 'tn2'],
      [4, 'warning-at-start', 'twarning-at-start'],
      [5, 'n1', 'after the restart'],
    ]);
    closeTemp(db);
  });

  it('keeps the newest MAX_KEPT, and a stored list that is not one is dropped, not trusted', () => {
    const db = openTemp();
    db.kv.set(NOTIFICATIONS_KEY, [{ seq: 'x' }, 'junk', { seq: 7, at: 1, notification: { id: 'a', title: 'kept', body: '', severity: 'info' } }]);
    const log = new NotificationLog();
    log.attach(db.kv);
    expect(log.list().map((r) => r.notification.title)).toEqual(['kept']);
    for (let i = 0; i < MAX_KEPT + 3; i++) log.record(note(String(i)), 100 + i);
    expect(log.list()).toHaveLength(MAX_KEPT);
    expect(log.list()[0]!.notification.id).toBe('3');
    expect(db.kv.get<unknown[]>(NOTIFICATIONS_KEY)).toHaveLength(MAX_KEPT);
    db.kv.set(NOTIFICATIONS_KEY, { not: 'a list' });
    const fresh = new NotificationLog();
    fresh.attach(db.kv);
    expect(fresh.list()).toEqual([]);
    closeTemp(db);
  });
});

/** A join signed by `id` as its agent signs it, seen from `address` (not loopback: loopback joins are approved). */
function join(svc: CoordinatorService, node: string, id: NodeIdentity, address: string) {
  const body = joinBody(node, { publicKey: id.publicKey });
  const bodySha256Hex = sha256Hex(JSON.stringify(body));
  const h = signatureHeaders(id, 'POST', '/v1/join', bodySha256Hex);
  const signed = { time: h[SIGNATURE_HEADERS.time]!, nonce: h[SIGNATURE_HEADERS.nonce]!, signature: h[SIGNATURE_HEADERS.signature]! };
  return svc.nodeKeys.checkJoin(body, { seenFrom: address, coordinatorAddr: null, sameMachine: false }, { method: 'POST', target: '/v1/join', bodySha256Hex, signed });
}

describe('a machine awaiting approval', () => {
  it('is announced once per node and key, naming it, its address and where to approve', () => {
    const told: UserNotification[] = [];
    const db = openTemp();
    const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
    const feature = createIdentityFeature({ db, coordinator: svc, announce: (n) => told.push(n) });
    const gpuBox = newIdentity('gpu-box');
    for (let i = 0; i < 3; i++) expect(join(svc, 'gpu-box', gpuBox, '192.0.2.44').admit).toBe(false);
    expect(told).toEqual([
      expect.objectContaining({ title: 'gpu-box awaits approval', severity: 'warning', target: { view: 'workers' }, body: expect.stringContaining(`gpu-box from 192.0.2.44`) }),
    ]);
    expect(told[0]!.body).toContain(gpuBox.fingerprint);
    expect(told[0]!.body).toContain('approve it in Workers');
    // Another key under the same name is another machine: told too.
    join(svc, 'gpu-box', newIdentity('other'), '192.0.2.45');
    expect(told).toHaveLength(2);
    feature.stop();
    closeTemp(db);
  });
});
