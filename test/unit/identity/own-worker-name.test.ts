// Issue 17 defect 1: the copy-paste join command run on the coordinator's own machine without --name presents the
// app's own worker's name with another key. It must be told the name is this machine's own worker's and to pass
// --name, and the own worker must never show "held back" (whose Accept would give this machine's name away). Any
// held-back key of another node is transient: it goes HELD_BACK_TTL_MS after the process presenting it last tried.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HELD_BACK_TTL_MS } from '../../../src-main/core/coordinator/membership/node-keys';
import { newIdentity, signedJoin, startCoordinator } from './identity-fixture';

describe("the app's own worker's name", () => {
  it('refuses another key under it with "pass --name", and holds nothing back', async () => {
    const { svc, api } = await startCoordinator();
    const own = newIdentity('machine-a');
    const copyPasted = newIdentity('machine-a');
    svc.nodeKeys.preApprove('vm', own.publicKey);
    svc.nodeKeys.setOwnNode('vm');
    expect((await signedJoin(api, 'vm', own)).status).toBe(200);

    const second = await signedJoin(api, 'vm', copyPasted);
    expect(second.status).toBe(409);
    expect(second.error).toContain("the name vm belongs to this machine's own worker");
    expect(second.error).toContain('--name vm-2');
    expect(second.error).not.toContain('accept');
    expect(svc.workers()[0]).toMatchObject({ node: 'vm', keyFingerprint: own.fingerprint });
    expect(svc.workers()[0]!.keyHeldBack).toBeUndefined();
    expect(svc.nodeKeys.awaitingList()).toEqual([]);
    expect(() => svc.nodeKeys.accept('vm', copyPasted.fingerprint)).toThrow('has no new key waiting to be accepted');
    // The events feed says it once, naming the name and the way out, however often the process tries.
    expect((await signedJoin(api, 'vm', copyPasted)).status).toBe(409);
    const said = svc.events().filter((e) => e.kind === 'key-conflict');
    expect(said.map((e) => e.message)).toEqual([
      `A worker at 127.0.0.1 tried to join as vm, this machine's own worker's name, with another key (${copyPasted.fingerprint}): refused; it must be started with another --name`,
    ]);

    // Under another name the same process is an ordinary machine (approved by loopback).
    expect((await signedJoin(api, 'vm-2', copyPasted)).status).toBe(200);
  });

  it('drops a held-back warning left from before the name became the own worker', async () => {
    const { svc, api } = await startCoordinator();
    const own = newIdentity('machine-a');
    svc.nodeKeys.preApprove('vm', own.publicKey);
    expect((await signedJoin(api, 'vm', newIdentity('machine-a'))).status).toBe(409);
    expect(svc.nodeKeys.get('vm')?.pending).not.toBeNull();
    svc.nodeKeys.setOwnNode('vm');
    expect(svc.nodeKeys.get('vm')?.pending).toBeNull();
    expect(svc.nodeKeys.awaitingList()).toEqual([]);
  });
});

describe('a held-back key of another node', () => {
  afterEach(() => vi.restoreAllMocks());

  it("goes from the worker's row HELD_BACK_TTL_MS after its last try (the coordinator's tick), and the pages are told", async () => {
    const { svc, api } = await startCoordinator();
    const old = newIdentity('machine-b');
    expect((await signedJoin(api, 'gpu-box', old)).status).toBe(200);
    const reinstalled = newIdentity('machine-b');
    expect((await signedJoin(api, 'gpu-box', reinstalled)).status).toBe(409);
    expect(svc.workers()[0]!.keyHeldBack).toBeDefined();
    const changes: string[] = [];
    svc.nodeKeys.onChange(() => changes.push('changed'));

    const t0 = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(t0 + HELD_BACK_TTL_MS - 5_000);
    svc.tick();
    expect(svc.workers()[0]!.keyHeldBack).toBeDefined();
    expect(changes).toEqual([]);
    vi.spyOn(Date, 'now').mockReturnValue(t0 + HELD_BACK_TTL_MS + 1_000);
    svc.tick();
    expect(changes).toEqual(['changed']);
    expect(svc.workers()[0]).toMatchObject({ keyFingerprint: old.fingerprint });
    expect(svc.workers()[0]!.keyHeldBack).toBeUndefined();
    expect(svc.nodeKeys.awaitingList()).toEqual([]);
    // Accepting it now says why it is gone and what to do.
    expect(() => svc.nodeKeys.accept('gpu-box', reinstalled.fingerprint)).toThrow("forgotten 10 minutes after its last try: start that machine's worker again, then accept its key");
  });
});
