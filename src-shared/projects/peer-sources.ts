/**
 * Members that can serve a snapshot's files to another (issue 23, item 2): who they are and where their blob
 * server listens (`prepare`'s `peers`), the key that proves a fetcher was told to prepare that snapshot
 * (`peerKey`, sent only over the coordinator's authenticated sessions), and which peers a member asks first —
 * the fastest measured links first, so a slow coordinator uplink is not what ten members wait on. Pure: the
 * coordinator ranks, the agent reads the same shapes (docs/security.md, "Project files between members").
 */
import { z } from 'zod';
import { linkBetween, type LinkMeasurement } from '../links/link-matrix';

/** Peers one `prepare` names at most (the agent tries them in this order before the coordinator). */
export const MAX_PROJECT_PEERS = 8;

/** 32 random bytes, base64url without padding. */
export const PEER_KEY_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const projectPeerSchema = z.object({
  workerId: z.number().int().nonnegative(),
  node: z.string().max(200),
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65535),
});
export type ProjectPeer = z.infer<typeof projectPeerSchema>;

/** The peer fields of a `prepare` (older coordinators send none: the agent fetches from the coordinator alone). */
export const preparePeerFields = {
  /** Members that hold (or are fetching) the snapshot, best link first. */
  peers: z.array(projectPeerSchema).max(MAX_PROJECT_PEERS).optional(),
  /** This snapshot's peer key: the agent proves it to a peer, and serves its own copy only to one that proves it. */
  peerKey: z.string().regex(PEER_KEY_PATTERN).optional(),
  /** Where in the file list this member starts (index of count), so members fetching at once take different files first. */
  stripe: z.object({ index: z.number().int().nonnegative().max(1024), count: z.number().int().positive().max(1024) }).optional(),
};

/** A worker the coordinator could name as a peer: where training reaches it and its blob server's port. */
export interface PeerCandidate {
  workerId: number;
  node: string;
  host: string | null;
  blobPort: number | null;
}

/**
 * The peers `selfId` should ask, best first: those with a measured link to it by bandwidth (fastest first), then
 * those not measured yet (by id, so the order is stable); never itself, never one without an address or server.
 */
export function rankPeers(selfId: number, candidates: readonly PeerCandidate[], links: readonly LinkMeasurement[], max = MAX_PROJECT_PEERS): ProjectPeer[] {
  const usable = candidates.filter((c): c is PeerCandidate & { host: string; blobPort: number } => c.workerId !== selfId && !!c.host && c.blobPort !== null);
  const speed = new Map(usable.map((c) => [c.workerId, linkBetween(links, selfId, c.workerId)?.mbps ?? null]));
  const sorted = [...usable].sort((a, b) => {
    const sa = speed.get(a.workerId) ?? null;
    const sb = speed.get(b.workerId) ?? null;
    if (sa !== null && sb !== null && sa !== sb) return sb - sa;
    if ((sa === null) !== (sb === null)) return sa === null ? 1 : -1;
    return a.workerId - b.workerId;
  });
  return sorted.slice(0, max).map((c) => ({ workerId: c.workerId, node: c.node, host: c.host, port: c.blobPort }));
}

/** `items` rotated to start at this member's stripe (members fetching at once begin on different files). */
export function stripeOrder<T>(items: readonly T[], stripe: { index: number; count: number } | undefined): T[] {
  if (!stripe || stripe.count <= 1 || items.length === 0) return [...items];
  const start = Math.floor((items.length * (stripe.index % stripe.count)) / stripe.count);
  return [...items.slice(start), ...items.slice(0, start)];
}
