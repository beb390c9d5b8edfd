/**
 * `gpu-share worker --discover`: listen on the LAN for a few seconds and join the one coordinator heard (in this
 * machine's cluster, when a pre-shared name is given). None or several is the person's call, so the worker
 * says what it heard and exits instead of guessing.
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

/** Browses, then picks (see pickCoordinator). */
export async function discoverOne(opts: { clusterName?: string | undefined; waitMs?: number; onProblem: (message: string) => void }): Promise<Pick> {
  const waitMs = opts.waitMs ?? DISCOVER_MS;
  const found = await discoverCoordinators({ clusterName: opts.clusterName, waitMs, onProblem: opts.onProblem });
  return pickCoordinator(found, opts.clusterName, waitMs);
}
