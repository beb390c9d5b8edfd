// Which address each member is published under and who hosts the c10d store: the rule that makes a run
// form across machines (a remote member handed 127.0.0.1 dials its own loopback and never trains).
import { describe, expect, it } from 'vitest';
import { chooseRendezvous, type MemberAddress } from '../../../src-main/core/coordinator/links/rendezvous-address';
import { connectionFacts } from '../../../src-main/core/coordinator/membership/worker-gate';

let nextId = 0;
function member(node: string, remote: string, local: string, rdzvPort = 29400): MemberAddress {
  const facts = connectionFacts(remote, local);
  return { workerId: nextId++, node, seenFrom: facts.seenFrom, coordinatorAddr: facts.coordinatorAddr, sameMachine: facts.sameMachine, advertiseHost: facts.seenFrom ?? '', rdzvPort };
}

describe('chooseRendezvous', () => {
  it("passes over a member already hosting another run's store (one rendezvous port per agent)", () => {
    const a = member('host-a', '10.213.0.2', '10.213.0.1');
    const b = member('host-b', '10.213.0.3', '10.213.0.1', 29401);
    expect(chooseRendezvous([a, b])).toMatchObject({ ok: true, hostWorkerId: a.workerId });
    expect(chooseRendezvous([a, b], { busyHosts: new Set([a.workerId]) })).toMatchObject({ ok: true, hostWorkerId: b.workerId, endpointHost: '10.213.0.3' });
    const local = [member('app', '127.0.0.1', '127.0.0.1'), member('second', '127.0.0.1', '127.0.0.1', 29401)];
    expect(chooseRendezvous(local, { busyHosts: new Set([local[0]!.workerId]) })).toMatchObject({ ok: true, hostWorkerId: local[1]!.workerId });
  });

  it('hosts the store on the preferred (best-connected) member, keeping the busy and reachability rules', () => {
    const a = member('host-a', '10.213.0.2', '10.213.0.1');
    const b = member('host-b', '10.213.0.3', '10.213.0.1', 29401);
    const c = member('host-c', '10.213.0.4', '10.213.0.1', 29402);
    expect(chooseRendezvous([a, b, c], { preferHosts: [c.workerId, a.workerId] })).toMatchObject({ ok: true, hostWorkerId: c.workerId, endpointHost: '10.213.0.4' });
    expect(chooseRendezvous([a, b, c], { preferHosts: [c.workerId, b.workerId], busyHosts: new Set([c.workerId]) })).toMatchObject({ ok: true, hostWorkerId: b.workerId });
    // The coordinator's own machine, seen under two addresses, cannot host even when preferred.
    const app = member('app', '127.0.0.1', '127.0.0.1');
    const d = member('host-d', '10.213.0.5', '10.213.0.1', 29403);
    const e = member('host-e', '192.168.1.5', '192.168.1.1', 29404);
    const pick = chooseRendezvous([app, d, e], { preferHosts: [app.workerId] });
    expect(pick.ok && pick.hostWorkerId).not.toBe(app.workerId);
  });

  it("holds, naming the members, when every member already hosts another run's store", () => {
    const a = member('host-a', '10.213.0.2', '10.213.0.1');
    const b = member('host-b', '10.213.0.3', '10.213.0.1', 29401);
    const c = chooseRendezvous([a, b], { busyHosts: new Set([a.workerId, b.workerId]) });
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.reason).toBe("every member already hosts another run's rendezvous store on every rendezvous port it offers: host-a (port 29400), host-b (port 29401); it starts when another run ends or another worker can join it");
  });

  it('all on the coordinator machine over loopback: loopback for everyone, the first member hosts', () => {
    const a = member('app', '127.0.0.1', '127.0.0.1');
    const b = member('second', '127.0.0.1', '127.0.0.1', 29401);
    const c = chooseRendezvous([a, b]);
    expect(c).toMatchObject({ ok: true, hostWorkerId: a.workerId, endpointHost: '127.0.0.1' });
    if (c.ok) expect([...c.localAddrs.values()]).toEqual(['127.0.0.1', '127.0.0.1']);
  });

  it('the app worker joined over loopback and another host joined over the LAN: the app worker is published under the LAN address the other host sees', () => {
    const app = member('host-a', '127.0.0.1', '127.0.0.1');
    const b = member('host-b', '10.213.0.2', '10.213.0.1');
    const c = chooseRendezvous([app, b]);
    expect(c).toMatchObject({ ok: true, hostWorkerId: app.workerId, endpointHost: '10.213.0.1' });
    if (!c.ok) return;
    expect(c.localAddrs.get(app.workerId)).toBe('10.213.0.1');
    expect(c.localAddrs.get(b.workerId)).toBe('10.213.0.2');
    // Never loopback once any member is elsewhere.
    for (const addr of c.localAddrs.values()) expect(addr).not.toMatch(/^127\.|^::1$/);
  });

  it('IPv4-mapped IPv6 peers are unwrapped; a worker of this machine dialling the LAN address counts as this machine', () => {
    const app = member('host-a', '::ffff:10.213.0.1', '::ffff:10.213.0.1');
    expect(app.sameMachine).toBe(true);
    const b = member('host-b', '::ffff:10.213.0.2', '::ffff:10.213.0.1');
    const c = chooseRendezvous([app, b]);
    expect(c).toMatchObject({ ok: true, endpointHost: '10.213.0.1' });
  });

  it('all members remote: the first one hosts, at the address it connects from', () => {
    const b = member('host-b', '10.213.0.2', '10.213.0.1');
    const c2 = member('host-c', '10.213.0.3', '10.213.0.1');
    const c = chooseRendezvous([b, c2]);
    expect(c).toMatchObject({ ok: true, hostWorkerId: b.workerId, endpointHost: '10.213.0.2' });
  });

  it('IPv6 all the way', () => {
    const app = member('host-a', '::1', '::1');
    const b = member('host-b', 'fd00:213::2', 'fd00:213::1');
    const c = chooseRendezvous([app, b]);
    expect(c).toMatchObject({ ok: true, hostWorkerId: app.workerId, endpointHost: 'fd00:213::1' });
  });

  it('members that reach this machine under different addresses: the app worker cannot host, a remote one does', () => {
    const app = member('host-a', '127.0.0.1', '127.0.0.1');
    const b = member('host-b', '10.213.0.2', '10.213.0.1');
    const c2 = member('host-c', '10.214.0.3', '10.214.0.1');
    const c = chooseRendezvous([app, b, c2]);
    expect(c).toMatchObject({ ok: true, hostWorkerId: b.workerId, endpointHost: '10.213.0.2' });
  });

  it('no member reachable by all: says why, naming the members', () => {
    const app = member('host-a', '127.0.0.1', '127.0.0.1');
    const b = member('host-b', '10.213.0.2', '10.213.0.1');
    const c2 = member('host-c', 'fd00:213::3', 'fd00:213::1');
    const c = chooseRendezvous([app, b, c2]);
    expect(c.ok).toBe(false);
    if (c.ok) return;
    expect(c.reason).toContain('no member can host the rendezvous');
    expect(c.reason).toContain('host-b at 10.213.0.2');
    expect(c.reason).toContain('host-c at fd00:213::3');
    expect(c.reason).toContain('--coordinator-host');
  });

  it('trusted advertised hosts (NAT) publish what the agent advertised', () => {
    const b = { ...member('host-b', '192.0.2.10', '10.213.0.1'), advertiseHost: '10.99.0.2' };
    const c = chooseRendezvous([b], { trustAdvertised: true });
    expect(c).toMatchObject({ ok: true, endpointHost: '10.99.0.2' });
  });
});
