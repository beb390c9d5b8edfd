/**
 * `gpu-share worker --discover`: listen on the LAN for a few seconds and join the one coordinator heard (in this
 * machine's cluster, when a pre-shared name is given) that proves it holds the cluster's join token. Anyone can
 * advertise anything over mDNS, so an advert — its address and its fingerprint alike — counts only after that
 * proof (the caller's `prove`, the join's first step: a nonce and the token's id are all it sends). None or
 * several is the person's call, so the worker says what it heard and exits instead of guessing.
 */
import type { DiscoveredCoordinator } from '../../../src-shared/nodes/ipc-discovery';
import { discoverCoordinators } from './mdns-browser';

export const DISCOVER_MS = 4_000;

export type Pick = { ok: true; coordinator: DiscoveredCoordinator } | { ok: false; exitCode: number; message: string };

export function pickCoordinator(found: readonly DiscoveredCoordinator[], clusterName: string | undefined, waitedMs: number): Pick {
  const which = clusterName === undefined ? 'coordinator without a cluster name' : `coordinator of cluster "${clusterName}"`;
  if (found.length === 1) return { ok: true, coordinator: found[0]! };
  if (found.length === 0) {
    return {
      ok: false,
      exitCode: 1,
      message:
        `no GPU Share ${which} answered on this network within ${waitedMs / 1000} s. ` +
        'Check that the coordinator runs with --coordinator-host 0.0.0.0 (it advertises only then), is on the same LAN, and ' +
        (clusterName === undefined ? 'has no --cluster-name (pass the same --cluster-name here if it has one)' : 'was started with the same --cluster-name') +
        '; or join by address with --join URL --cert-sha256 HEX.',
    };
  }
  const lines = found.map((c) => `  ${c.name}  ${c.url}  --cert-sha256 ${c.certSha256}`).join('\n');
  return {
    ok: false,
    exitCode: 2,
    message: `${found.length} GPU Share coordinators answered; say which one to join with --join URL --cert-sha256 HEX${clusterName === undefined ? ', or give your cluster\'s --cluster-name' : ''}:\n${lines}`,
  };
}

/** Asks a heard coordinator, over a connection pinned to its advertised fingerprint, to prove the join token. */
export type ProveCoordinator = (coordinator: DiscoveredCoordinator) => Promise<{ ok: true } | { ok: false; message: string }>;

/** The coordinators among `found` that prove the token (all asked at once); `onIgnored` hears of each that does not. */
export async function provenOnly(
  found: readonly DiscoveredCoordinator[],
  prove: ProveCoordinator,
  onIgnored: (coordinator: DiscoveredCoordinator, message: string) => void,
): Promise<DiscoveredCoordinator[]> {
  const results = await Promise.all(found.map(async (c) => ({ c, result: await prove(c).catch((e: unknown) => ({ ok: false as const, message: String(e) })) })));
  const proven: DiscoveredCoordinator[] = [];
  for (const { c, result } of results) {
    if (result.ok) proven.push(c);
    else onIgnored(c, result.message);
  }
  return proven;
}

/** The line `worker --discover` prints for a heard coordinator that could not prove the token. */
export function ignoredLine(c: DiscoveredCoordinator): string {
  return `heard ${c.name} at ${c.url}: could not prove it holds your cluster's join token — ignored`;
}

/** Browses, keeps the coordinators that prove the token, then picks (see pickCoordinator). */
export async function discoverOne(opts: {
  clusterName?: string | undefined;
  waitMs?: number;
  onProblem: (message: string) => void;
  prove: ProveCoordinator;
  onIgnored: (coordinator: DiscoveredCoordinator, message: string) => void;
}): Promise<Pick> {
  const waitMs = opts.waitMs ?? DISCOVER_MS;
  const found = await discoverCoordinators({ clusterName: opts.clusterName, waitMs, onProblem: opts.onProblem });
  return pickCoordinator(await provenOnly(found, opts.prove, opts.onIgnored), opts.clusterName, waitMs);
}
