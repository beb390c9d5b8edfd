// Machines are approved before they train (issue 14, items 3 and 12): a stranger holding the join token is
// listed as awaiting approval and gets nothing else; approving exactly its key lets it in; revoking takes it out.
// The coordinator sees these joins as coming from another machine (192.0.2.50): connectionFacts is wrapped
// below, since a unit test may only talk to loopback.
import { describe, expect, it, vi } from 'vitest';
import { CoordinatorClient } from '../../../src-main/agent/coordinator-client';
import { JoinError, joinOnce, retryJoin } from '../../../src-main/agent/join-coordinator';
import type { NodeIdentity } from '../../../src-main/agent/node-identity';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { restoreCoordinator } from '../../../src-main/core/coordinator-persistence';
import { fingerprintOf, NodeKeys } from '../../../src-main/core/coordinator/membership/node-keys';
import type { SignatureChecker } from '../../../src-main/core/api/request-signature';
import { apiPaths, type JoinRequest } from '../../../src-shared/worker-protocol';
import { cli } from '../cli/helpers';
import { FakeClock } from '../coordinator/fake-clock';
import { closeTemp, openTemp, tempDataDir } from '../state/temp-state';
import { JOIN, joinBody, newIdentity, OPERATOR, send, startCoordinator } from './identity-fixture';

const remote = vi.hoisted(() => ({ from: null as string | null }));
vi.mock('../../../src-main/core/coordinator/membership/worker-gate', async (importOriginal) => {
  const orig = await importOriginal<typeof import('../../../src-main/core/coordinator/membership/worker-gate')>();
  return {
    ...orig,
    connectionFacts: (r: string | null | undefined, l: string | null | undefined) =>
      remote.from ? { seenFrom: remote.from, coordinatorAddr: '192.0.2.1', sameMachine: false } : orig.connectionFacts(r, l),
  };
});

const STRANGER = '192.0.2.50';
const env = { GPU_SHARE_OPERATOR_TOKEN: OPERATOR };

/** One join as the agent makes it (challenge, signed join), from `from` (null: loopback). */
async function agentJoin(url: string, node: string, identity: NodeIdentity | null, from: string | null = STRANGER) {
  remote.from = from;
  const client = new CoordinatorClient(url, JOIN);
  client.useIdentity(identity);
  const request = (host: string): JoinRequest => joinBody(node, { advertiseHost: host, gpus: [{ uuid: 'GPU-1', name: 'RTX 4090', vramTotalMb: 24_564 }] });
  try {
    const { joined } = await joinOnce(client, request, from ?? undefined);
    return { joined, client, error: null };
  } catch (error) {
    if (!(error instanceof JoinError)) throw error;
    return { joined: null, client, error };
  } finally {
    remote.from = null;
  }
}

describe('machines awaiting approval', () => {
  it('a stranger with the join token is listed awaiting (202) and gets no worker, no session, no run', async () => {
    const { svc, api } = await startCoordinator();
    const key = newIdentity('stranger');
    const first = await agentJoin(api.url, 'gpu-box', key);
    expect(first.error).toMatchObject({ kind: 'awaiting', retryAfterMs: 3000 });
    expect(first.error!.message).toBe(
      `waiting for approval on the coordinator: this machine's key is ${key.fingerprint} — approve it there with ` +
        `"gpu-share workers approve gpu-box --key ${key.fingerprint}" or the Approve button in the Workers view`,
    );
    expect(svc.workers()).toEqual([]);
    expect(svc.runs()).toEqual([]);
    expect(svc.nodeKeys.get('gpu-box')).toBeNull();
    const [entry] = svc.nodeKeys.awaitingList();
    expect(entry).toMatchObject({ node: 'gpu-box', fingerprint: key.fingerprint, address: STRANGER, hardware: { gpus: [{ name: 'RTX 4090' }], cpuCores: 4 } });
    // A re-join refreshes the same entry.
    await agentJoin(api.url, 'gpu-box', key);
    expect(svc.nodeKeys.awaitingList()).toHaveLength(1);
    // /v1/state and `workers list` show it.
    const listed = await cli(['workers', 'list', '--url', api.url], env);
    expect(listed.out).toContain(`gpu-box  awaiting approval  ${key.fingerprint}  ${STRANGER}`);
    expect(listed.out).toContain(`gpu-share workers approve gpu-box --key ${key.fingerprint}`);
    const state = await send(api, { method: 'GET', path: apiPaths.state, headers: { authorization: `Bearer ${OPERATOR}` } });
    expect(state.json!.awaiting).toEqual([expect.objectContaining({ node: 'gpu-box', fingerprint: key.fingerprint })]);
  });

  it('approves exactly the key shown: another fingerprint approves nothing listed (a pre-approval, naming both); the right one admits the next join', async () => {
    const { svc, api } = await startCoordinator();
    const key = newIdentity('stranger');
    const other = newIdentity('someone-else');
    await agentJoin(api.url, 'gpu-box', key);
    const wrong = await cli(['workers', 'approve', 'gpu-box', '--key', other.fingerprint, '--url', api.url], env);
    expect(wrong.code).toBe(0);
    expect(wrong.out).toContain(`Pre-approved gpu-box with key ${other.fingerprint} until `);
    expect(wrong.out).toContain(`the key awaiting approval for gpu-box is ${key.fingerprint} (from ${STRANGER}), not ${other.fingerprint} (those stay unapproved)`);
    expect((await agentJoin(api.url, 'gpu-box', key)).error?.kind).toBe('awaiting');
    expect(svc.nodeKeys.preApprovals()).toEqual([expect.objectContaining({ node: 'gpu-box', fingerprint: other.fingerprint })]);
    const noKey = await cli(['workers', 'approve', 'gpu-box', '--url', api.url], env);
    expect(noKey.err).toContain('--key SHA256:… is required');

    const right = await cli(['workers', 'approve', 'gpu-box', '--key', key.fingerprint, '--url', api.url], env);
    expect(right.err).toBe('');
    expect(right.out).toBe(`Approved gpu-box (${key.fingerprint}): it joins at its next try, within a few seconds.\n`);
    expect(svc.nodeKeys.awaitingList()).toEqual([]);
    expect(svc.nodeKeys.preApprovals()).toEqual([]);
    const admitted = await agentJoin(api.url, 'gpu-box', key);
    expect(admitted.joined).toMatchObject({ workerId: expect.any(Number) });
    expect(svc.workers()[0]).toMatchObject({ node: 'gpu-box', keyFingerprint: key.fingerprint });
  });

  it('revoke ends the session, takes the worker out, removes the approval from state.db, and the next join awaits again', async () => {
    const dir = tempDataDir();
    const db = openTemp(dir);
    const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
    svc.nodeKeys.useStore(db.nodeKeys);
    const { api } = await startCoordinator(svc);
    const key = newIdentity('machine-a');
    await agentJoin(api.url, 'gpu-box', key);
    svc.nodeKeys.approve('gpu-box', key.fingerprint);
    expect(db.nodeKeys.list()).toEqual([expect.objectContaining({ node: 'gpu-box', publicKey: key.publicKey })]);
    const { joined, client } = await agentJoin(api.url, 'gpu-box', key);
    expect((await client.call('heartbeat', [joined!.workerId], { incarnation: joined!.incarnation })).kind).toBe('ok');
    expect(svc.workers()[0]!.state).toBe('active');

    const revoked = await cli(['workers', 'revoke', 'gpu-box', '--url', api.url], env);
    expect(revoked.err).toBe('');
    expect(svc.workers()[0]).toMatchObject({ state: 'failed', stateCause: 'its approval was revoked' });
    expect(await client.call('heartbeat', [joined!.workerId], { incarnation: joined!.incarnation })).toMatchObject({ kind: 'http-error', status: 401 });
    expect(db.nodeKeys.list()).toEqual([]);
    expect((await agentJoin(api.url, 'gpu-box', key)).error?.kind).toBe('awaiting');
    expect((await cli(['workers', 'revoke', 'gpu-box', '--url', api.url], env)).err).toContain('no node named gpu-box is approved');
    await api.close();
    closeTemp(db);
  });

  it('counts a key pinned before approvals existed (a node_keys row) as approved, from any address', async () => {
    const db = openTemp(tempDataDir());
    const key = newIdentity('old-pin');
    db.nodeKeys.save({ node: 'veteran', publicKey: key.publicKey, pinnedAt: 1, pending: null });
    const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
    svc.nodeKeys.useStore(db.nodeKeys);
    const { api } = await startCoordinator(svc);
    expect((await agentJoin(api.url, 'veteran', key)).joined).not.toBeNull();
    expect(svc.nodeKeys.awaitingList()).toEqual([]);
    await api.close();
    closeTemp(db);
  });

  it('approves by construction a join over loopback, and every join under --auto-approve', async () => {
    const { svc, api } = await startCoordinator();
    const local = newIdentity('this-machine');
    expect((await agentJoin(api.url, 'here', local, null)).joined).not.toBeNull();
    expect(svc.nodeKeys.isApproved('here', local.publicKey)).toBe(true);

    svc.nodeKeys.setAutoApprove(true);
    const lab = newIdentity('lab-box');
    expect((await agentJoin(api.url, 'lab-box', lab)).joined).not.toBeNull();
    expect(svc.nodeKeys.isApproved('lab-box', lab.publicKey)).toBe(true);
  });

  it('refuses an unsigned join from another machine (403) and keeps nothing of it; over loopback an old agent still joins', async () => {
    const { svc, api } = await startCoordinator();
    const refused = await agentJoin(api.url, 'old-agent', null);
    expect(refused.error).toMatchObject({ kind: 'unauthorized' });
    expect(refused.error!.message).toContain('403: old-agent sent an unsigned join: update the agent: joins must be signed');
    expect(svc.nodeKeys.awaitingList()).toEqual([]);
    expect(svc.workers()).toEqual([]);
    expect((await agentJoin(api.url, 'old-agent', null, null)).joined).not.toBeNull();
  });

  it('a flood of signed joins under fresh names and keys leaves nothing in state.db and at most 32 entries, the oldest kept', async () => {
    const db = openTemp(tempDataDir());
    const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
    restoreCoordinator(db, svc);
    svc.nodeKeys.useStore(db.nodeKeys);
    const { api } = await startCoordinator(svc);
    // One address in each /24: only the total bounds them. Past 32 the newcomer is refused (429), never the listed.
    for (let i = 0; i < 40; i++) expect((await agentJoin(api.url, `flood-${i}`, newIdentity(`flood-${i}`), `198.51.${i}.7`)).error?.kind).toBe(i < 32 ? 'awaiting' : 'unreachable');
    expect(svc.nodeKeys.awaitingList()).toHaveLength(32);
    expect(svc.nodeKeys.awaitingList()[0]!.node).toBe('flood-0');
    expect(svc.workers()).toEqual([]);
    expect(db.nodeKeys.list()).toEqual([]);
    expect(db.nodeNames.list()).toEqual([]);
    await api.close();
    closeTemp(db);
  });

  it('keeps at most 32 machines awaiting: the 33rd is refused (429, naming how to approve it by key), the oldest stays', () => {
    let now = 1000;
    const forgotten: string[] = [];
    const checker = { check: () => undefined, forgetKey: (k: string) => forgotten.push(k) } as unknown as SignatureChecker;
    const keys = new NodeKeys({ now: () => now, checker });
    const identities = Array.from({ length: 33 }, (_, i) => newIdentity(`flood-${i}`));
    const conn = (i: number) => ({ seenFrom: `198.51.${i}.7`, coordinatorAddr: null, sameMachine: false });
    const request = { method: 'POST', target: '/v1/join', bodySha256Hex: '', signed: null };
    const join = (i: number) => keys.checkJoin(joinBody(`n${i}`, { publicKey: identities[i]!.publicKey }), conn(i), request);
    for (let i = 0; i < 32; i++) expect(join(i).admit).toBe(false);
    expect(() => join(32)).toThrow(`32 machines already await approval, the most this coordinator lists, so n32 (key ${identities[32]!.fingerprint}) is not listed`);
    expect(() => join(32)).toThrow(`gpu-share workers approve n32 --key ${identities[32]!.fingerprint}`);
    const list = keys.awaitingList();
    expect(list).toHaveLength(32);
    expect(list[0]!.node).toBe('n0');
    expect(forgotten).toEqual([]);
    // A machine whose agent stopped asking goes after its time; then a newcomer has room.
    now += 60_000;
    for (let i = 1; i < 32; i++) join(i);
    now += 61_000;
    expect(keys.expire()).toBe(true);
    expect(keys.isAwaiting(identities[0]!.publicKey)).toBe(false);
    expect(forgotten).toEqual([identities[0]!.publicKey]);
    expect(join(32).admit).toBe(false);
    expect(keys.awaitingList().map((a) => a.node)).toContain('n32');
  });
});

describe('accept-key names the fingerprint (item 12)', () => {
  it('refuses without --key, refuses another key naming both, accepts exactly the held-back one', async () => {
    const { svc, api } = await startCoordinator();
    const old = newIdentity('machine-old');
    const swapped = newIdentity('machine-new');
    const parked = newIdentity('machine-attacker');
    expect((await agentJoin(api.url, 'gpu-box', old, null)).joined).not.toBeNull();
    expect((await agentJoin(api.url, 'gpu-box', swapped, null)).error?.message).toContain(`gpu-share workers accept-key gpu-box --key ${swapped.fingerprint}`);
    expect((await cli(['workers', 'accept-key', 'gpu-box', '--url', api.url], env)).err).toContain('--key SHA256:… is required');
    const wrong = await cli(['workers', 'accept-key', 'gpu-box', '--key', parked.fingerprint, '--url', api.url], env);
    expect(wrong.err).toContain(`the key held back for gpu-box is ${swapped.fingerprint} (from 127.0.0.1), not ${parked.fingerprint}`);
    expect(svc.nodeKeys.isApproved('gpu-box', old.publicKey)).toBe(true);
    const right = await cli(['workers', 'accept-key', 'gpu-box', '--key', swapped.fingerprint, '--url', api.url], env);
    expect(right.err).toBe('');
    expect(svc.nodeKeys.isApproved('gpu-box', swapped.publicKey)).toBe(true);
    expect(fingerprintOf(svc.nodeKeys.get('gpu-box')!.publicKey)).toBe(swapped.fingerprint);
  });
});

describe('the agent waiting for approval', () => {
  it('retries every retryAfterMs (clamped to 2–30 s), logs the wait once, and stops when told', async () => {
    const clock = new FakeClock();
    const lines: string[] = [];
    let tries = 0;
    let stopped = false;
    let wake: (() => void) | null = null;
    const waiting = retryJoin(
      async () => {
        tries += 1;
        throw new JoinError('awaiting', 'waiting for approval on the coordinator: …', 10);
      },
      { clock, log: (l) => lines.push(l), stopped: () => stopped, onWait: (w) => (wake = w) },
    );
    await vi.waitFor(() => expect(tries).toBe(1));
    clock.advance(1999);
    await Promise.resolve();
    expect(tries).toBe(1);
    clock.advance(1);
    await vi.waitFor(() => expect(tries).toBe(2));
    clock.advance(2000);
    await vi.waitFor(() => expect(tries).toBe(3));
    expect(lines).toEqual(['waiting for approval on the coordinator: …']);
    stopped = true;
    (wake as (() => void) | null)?.();
    await expect(waiting).rejects.toMatchObject({ kind: 'awaiting', message: 'stopped while waiting for approval on the coordinator' });
  });
});
