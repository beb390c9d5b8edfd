/**
 * LAN discovery's channels, spread into ipc.ts's maps: the coordinators this machine hears advertising
 * `_gpu-share._tcp` over mDNS, for the "Join a cluster" panel. Handlers: src-main/app/discovery-feature.ts.
 */
import { z } from 'zod';

/** A coordinator heard on the LAN: what the join panel fills in when it is picked. */
export interface DiscoveredCoordinator {
  /** Its display name (the coordinator machine's hostname). */
  name: string;
  /** https://ADDRESS:PORT, the address being the one its answer came from. */
  url: string;
  /** The fingerprint it advertises, which the join proof was made over: a liar is not listed. */
  certSha256: string;
  /** This machine's pre-shared cluster name that the coordinator's tag matched (absent: an untagged coordinator). */
  clusterName?: string;
  /** The GPU Share version it runs. */
  version?: string;
  /** When it was last heard (ms since the epoch). */
  seenAt: number;
}

export const discoveryRequests = {
  /**
   * Starts listening on first use; answers with the coordinators heard so far that prove they hold `token` (the
   * join token typed in the panel; none without one), and the list then arrives by onDiscovered.
   */
  getDiscovered: { channel: 'discovery:list', arg: z.object({ token: z.string().max(512).optional() }) },
} as const;

export interface DiscoveryRequestResults {
  getDiscovered: DiscoveredCoordinator[];
}

export const discoveryEvents = {
  /** The list of coordinators heard changed (one came, one left or changed). */
  onDiscovered: 'discovery:changed',
} as const;

export interface DiscoveryEventPayloads {
  onDiscovered: DiscoveredCoordinator[];
}
