// An awaiting-approval flood must not hide the real machine (issue 26, items 6 and 9): approving by fingerprint
// works whether or not the machine is listed (a pre-approval its next join meets, kept in state.db), the awaiting
// list is bounded per address and per /24 and keeps the oldest, and lookalike names (WK1, wk1.) are one name.
import { describe, expect, it } from 'vitest';
import { createIdentityFeature } from '../../../src-main/app/identity-feature';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { NodeKeys } from '../../../src-main/core/coordinator/membership/node-keys';
import { WorkerGate } from '../../../src-main/core/coordinator/membership/worker-gate';
import type { SignatureChecker } from '../../../src-main/core/api/request-signature';
import type { NodeIdentity } from '../../../src-main/agent/node-identity';
import { FakeClock } from '../coordinator/fake-clock';
import { closeTemp, openTemp, tempDataDir } from '../state/temp-state';
import { JOIN, joinBody, newIdentity, OPERATOR } from './identity-fixture';

const request = { method: 'POST', target: '/v1/join', bodySha256Hex: '', signed: null };
const from = (address: string) => ({ seenFrom: address, coordinatorAddr: null, sameMachine: false });

function nodeKeys(clock = { t: 1_000_000 }) {
  const checker = { check: () => undefined, forgetKey: () => undefined } as unknown as SignatureChecker;
  return { keys: new NodeKeys({ now: () => clock.t, checker }), clock };
}

function join(keys: NodeKeys, node: string, id: NodeIdentity, address: string) {
  return keys.checkJoin(joinBody(node, { publicKey: id.publicKey }), from(address), request);
}

/** Fills the list with 32 strangers, one per /24. */
function flood(keys: NodeKeys): void {
  for (let i = 0; i < 32; i++) expect(join(keys, `stranger-${i}`, newIdentity(`s-${i}`), `203.0.${i}.9`).admit).toBe(false);
}

describe('approving by fingerprint whether or not the machine is listed', () => {
  it('a pre-approval is met by the next join with that key, even with the list full; another key is not let in', () => {
    const { keys, clock } = nodeKeys();
    flood(keys);
    const honest = newIdentity('honest');
    expect(() => join(keys, 'gpu-box', honest, '192.0.2.77')).toThrow('so gpu-box');
    const outcome = keys.approve('gpu-box', honest.fingerprint);
    expect(outcome).toMatchObject({ kind: 'pre-approved', message: expect.stringContaining(`Pre-approved gpu-box with key ${honest.fingerprint} until `) });
    expect(keys.preApprovals()).toEqual([expect.objectContaining({ node: 'gpu-box', fingerprint: honest.fingerprint, expiresAt: clock.t + 24 * 3600_000 })]);
    // A stranger under that name with its own key meets nothing: the list is still full.
    expect(() => join(keys, 'gpu-box', newIdentity('squatter'), '192.0.2.78')).toThrow('is not listed');
    const admitted = join(keys, 'gpu-box', honest, '192.0.2.77');
    expect(admitted).toEqual({ admit: true, pin: honest.publicKey });
    keys.pin('gpu-box', honest.publicKey); // what the coordinator does once the join succeeded
    expect(keys.isApproved('gpu-box', honest.publicKey)).toBe(true);
    expect(keys.preApprovals()).toEqual([]);
    expect(keys.awaitingList()).toHaveLength(32);
  });

  it('lapses after its time; revoke takes one back', () => {
    const { keys, clock } = nodeKeys();
    const honest = newIdentity('honest');
    keys.approve('gpu-box', honest.fingerprint);
    keys.approve('other', newIdentity('o').fingerprint);
    keys.revoke('other');
    expect(keys.preApprovals().map((p) => p.node)).toEqual(['gpu-box']);
    clock.t += 24 * 3600_000 + 1;
    expect(keys.expire()).toBe(true);
    expect(keys.preApprovals()).toEqual([]);
    expect(join(keys, 'gpu-box', honest, '192.0.2.77').admit).toBe(false);
  });

  it('is kept in state.db: a restart in between still admits the machine', async () => {
    const dir = tempDataDir();
    const honest = newIdentity('honest');
    let db = openTemp(dir);
    let svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
    let feature = createIdentityFeature({ db, coordinator: svc });
    const reply = await feature.handlers.approveNode({ node: 'gpu-box', fingerprint: honest.fingerprint });
    expect(reply.message).toContain('no machine named gpu-box awaits approval now');
    expect(reply.preApprovals).toEqual([expect.objectContaining({ node: 'gpu-box' })]);
    feature.stop();
    closeTemp(db);
    db = openTemp(dir);
    svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
    feature = createIdentityFeature({ db, coordinator: svc });
    expect(svc.nodeKeys.preApprovals()).toEqual([expect.objectContaining({ node: 'gpu-box', fingerprint: honest.fingerprint })]);
    svc.nodeKeys.pin('gpu-box', honest.publicKey); // its join met it (the join itself: the test above)
    expect(db.kv.get('node-preapprovals')).toEqual([]);
    expect(db.nodeKeys.list()).toEqual([expect.objectContaining({ node: 'gpu-box', publicKey: honest.publicKey })]);
    feature.stop();
  });
});

describe('the awaiting list', () => {
  it('keeps the oldest: a full list refuses newcomers and a listed machine stays listed through a flood', () => {
    const { keys } = nodeKeys();
    const honest = newIdentity('honest');
    expect(join(keys, 'gpu-box', honest, '192.0.2.77').admit).toBe(false);
    for (let i = 0; i < 200; i++) {
      try {
        join(keys, `stranger-${i}`, newIdentity(`s-${i % 40}-${i}`), `198.18.${i % 100}.${1 + (i % 7)}`);
      } catch (error) {
        expect((error as { status: number }).status).toBe(429);
      }
      expect(keys.awaitingList()[0]).toMatchObject({ node: 'gpu-box', fingerprint: honest.fingerprint });
    }
    expect(keys.awaitingList()).toHaveLength(32);
    expect(keys.approve('gpu-box', honest.fingerprint).kind).toBe('approved');
  });

  it('holds at most 2 machines per address and 16 per /24, naming the bound', () => {
    const { keys } = nodeKeys();
    expect(join(keys, 'a', newIdentity('a'), '10.1.2.3').admit).toBe(false);
    expect(join(keys, 'b', newIdentity('b'), '10.1.2.3').admit).toBe(false);
    expect(() => join(keys, 'c', newIdentity('c'), '10.1.2.3')).toThrow('2 machines from 10.1.2.3 already await approval, the most from one address');
    for (let i = 0; i < 14; i++) join(keys, `d${i}`, newIdentity(`d${i}`), `10.1.2.${10 + i}`);
    expect(() => join(keys, 'e', newIdentity('e'), '10.1.2.200')).toThrow('16 machines from 10.1.2.0/24 already await approval, the most from one network');
    expect(join(keys, 'f', newIdentity('f'), '10.1.3.1').admit).toBe(false);
    expect(keys.awaitingList()).toHaveLength(17);
  });
});

describe('lookalike names (item 9)', () => {
  it('WK1 and wk1. do not await beside wk1; approving wk1 matches the spelling the machine sent', () => {
    const { keys } = nodeKeys();
    const real = newIdentity('real');
    expect(join(keys, 'wk1', real, '192.0.2.10').admit).toBe(false);
    for (const twin of ['WK1', 'wk1.', 'Wk1..']) {
      expect(() => join(keys, twin, newIdentity(twin), '192.0.2.11')).toThrow(`the node name "${twin}" is the same name as "wk1" (node names are compared without case and trailing dots), which already awaits approval (from 192.0.2.10)`);
    }
    expect(keys.awaitingList().map((a) => a.node)).toEqual(['wk1']);
    expect(keys.approve('WK1', real.fingerprint).kind).toBe('approved');
    expect(keys.get('wk1')).toMatchObject({ node: 'wk1', publicKey: real.publicKey });
  });

  it('a lookalike of an approved name is refused with the name to use, and a name bound to a machine refuses its lookalikes', () => {
    const { keys } = nodeKeys();
    const real = newIdentity('real');
    keys.preApprove('wk1', real.publicKey);
    expect(() => join(keys, 'WK1', real, '192.0.2.10')).toThrow(`the node name "WK1" is the same name as "wk1" (node names are compared without case and trailing dots), which is approved with key ${real.fingerprint}: start this worker with --name wk1`);
    expect(() => join(keys, 'wk1.', newIdentity('x'), '192.0.2.12')).toThrow('"wk1." is the same name as "wk1"');
    expect(keys.awaitingList()).toEqual([]);
    const gate = new WorkerGate();
    const admit = (node: string, machineId: string) => gate.admit({ node, machineId, advertiseHost: '192.0.2.10', local: false }, { seenFrom: '192.0.2.10', coordinatorAddr: null, sameMachine: false });
    admit('wk1', 'machine-one-aaaaaaaaaaaaaaaa');
    expect(() => admit('WK1.', 'machine-two-bbbbbbbbbbbbbbbb')).toThrow('the node name "WK1." is the same name as "wk1"');
    expect(() => admit('WK1.', 'machine-two-bbbbbbbbbbbbbbbb')).toThrow('belongs to another machine');
    expect(gate.machineHashOf('WK1')).toBe(gate.machineHashOf('wk1'));
  });
});
