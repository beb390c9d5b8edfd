/**
 * Which address each member of a generation is reached at, and which member hosts the c10d store. Loopback
 * is right only while every member is on the coordinator's machine: a worker on another host handed
 * `127.0.0.1:<port>` dials its own loopback and the group never forms. So a member on the coordinator's
 * machine is published under the coordinator's address as the other machines see it, a member elsewhere
 * under the address it connects from, and the store goes to the first member (in the preferred order — the
 * best-connected first, see ring-order.ts — else join order) that every other member can reach. A worker
 * already hosting another run's store is passed over: its agent has one
 * rendezvous port, so two runs' stores on it would collide.
 */
import { isIP } from 'node:net';
import { isLoopbackAddress } from '../membership';

export interface MemberAddress {
  workerId: number;
  node: string;
  /** The address the coordinator sees the member's agent connect from. */
  seenFrom: string | null;
  /** The coordinator's own address on that member's connection. */
  coordinatorAddr: string | null;
  sameMachine: boolean;
  /** What the agent advertised; used instead of seenFrom only when the operator trusts advertised hosts. */
  advertiseHost: string;
  rdzvPort: number;
}

export type RendezvousChoice =
  | { ok: true; hostWorkerId: number; endpointHost: string; localAddrs: Map<number, string> }
  | { ok: false; reason: string };

function family(address: string): 4 | 6 | 0 {
  const f = isIP(address);
  return f === 4 || f === 6 ? f : 0;
}

/**
 * Decides the addresses for one generation. `trustAdvertised` publishes what agents advertised instead of
 * where they are seen from (for NAT).
 */
export function chooseRendezvous(
  members: MemberAddress[],
  opts: { trustAdvertised?: boolean; busyHosts?: ReadonlySet<number>; preferHosts?: readonly number[] } = {},
): RendezvousChoice {
  if (members.length === 0) return { ok: false, reason: 'no members' };
  const remote = members.filter((m) => !m.sameMachine);
  const localAddrs = new Map<number, string>();
  const busy = opts.busyHosts ?? new Set<number>();
  // Candidates for the store in the preferred order (ring-order.ts: the best-connected first), then join order.
  const rank = new Map((opts.preferHosts ?? []).map((id, i) => [id, i]));
  const preference = (m: MemberAddress) => rank.get(m.workerId) ?? rank.size;
  const free = members.filter((m) => !busy.has(m.workerId)).sort((a, b) => preference(a) - preference(b));
  if (free.length === 0) {
    const names = members.map((m) => `${m.node} (port ${m.rdzvPort})`).join(', ');
    return {
      ok: false,
      reason: `every member already hosts another run's rendezvous store on every rendezvous port it offers: ${names}; it starts when another run ends or another worker can join it`,
    };
  }

  if (remote.length === 0) {
    // Everyone is on the coordinator's machine: whatever they connect from works between them.
    for (const m of members) localAddrs.set(m.workerId, opts.trustAdvertised ? m.advertiseHost : (m.seenFrom ?? m.advertiseHost));
    const first = free[0]!;
    return { ok: true, hostWorkerId: first.workerId, endpointHost: localAddrs.get(first.workerId)!, localAddrs };
  }

  // How the other machines reach this one. They may see it under different addresses (several networks).
  const coordinatorSeenAs = [...new Set(remote.map((m) => m.coordinatorAddr).filter((a): a is string => !!a && !isLoopbackAddress(a)))];
  const remoteAddr = (m: MemberAddress): string | null => (opts.trustAdvertised ? m.advertiseHost : m.seenFrom);
  for (const m of members) {
    const addr = m.sameMachine ? (coordinatorSeenAs[0] ?? null) : remoteAddr(m);
    if (addr) localAddrs.set(m.workerId, addr);
  }

  const families = new Set(remote.map((m) => family(remoteAddr(m) ?? '')));
  const reachableByAll = (m: MemberAddress): string | null => {
    const addr = localAddrs.get(m.workerId);
    if (!addr || isLoopbackAddress(addr)) return null;
    if (m.sameMachine) return coordinatorSeenAs.length === 1 ? addr : null;
    // A member elsewhere is reachable by the others when they all speak its address family.
    const f = family(addr);
    return f === 0 || (families.size === 1 && families.has(f)) ? addr : null;
  };
  for (const m of free) {
    const addr = reachableByAll(m);
    if (addr) return { ok: true, hostWorkerId: m.workerId, endpointHost: addr, localAddrs };
  }
  const reachableButBusy = members.filter((m) => busy.has(m.workerId) && reachableByAll(m) !== null);
  if (reachableButBusy.length > 0) {
    const names = reachableButBusy.map((m) => m.node).join(', ');
    return {
      ok: false,
      reason: `the only members every other member can reach (${names}) already host another run's rendezvous store on every rendezvous port they offer; it starts when that run ends or a reachable worker joins it`,
    };
  }
  const seen = members.map((m) => `${m.node} at ${localAddrs.get(m.workerId) ?? m.seenFrom ?? 'an unknown address'}${m.sameMachine ? ' (this machine)' : ''}`).join(', ');
  const why =
    coordinatorSeenAs.length > 1
      ? `the other machines reach this one under different addresses (${coordinatorSeenAs.join(', ')})`
      : `the machines connect over different address families or from loopback`;
  return {
    ok: false,
    reason: `no member can host the rendezvous where every other member can reach it: ${why}; members: ${seen}. Put them on one network, or start the coordinator with --coordinator-host set to the address they share`,
  };
}
