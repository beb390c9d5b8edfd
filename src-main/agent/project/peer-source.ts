/**
 * A snapshot's files from the members that hold them, the coordinator as the fallback (issue 23, item 2): each
 * blob is asked of the peers in the order the coordinator ranked them by the link map, then of the coordinator.
 * A peer that does not hold a file yet or is busy is passed over for that file; one that cannot be reached,
 * refuses the key, stalls or sends other bytes is passed over and, after a few such failures, not asked again.
 * Members that fetch at once start on different files (their stripe), so each soon holds what the others lack
 * and the coordinator's link carries each file about once. It counts where the bytes came from, for the log.
 */
import { binaryBytes } from '../../platform/projects/disk-space';
import { stripeOrder, type ProjectPeer } from '../../../src-shared/projects/peer-sources';
import { PeerClient } from './peer-client';
import type { ProjectSource } from './project-source';

export interface PeerSourceOptions {
  coordinator: ProjectSource;
  snapshot: string;
  peers: readonly ProjectPeer[];
  key: string;
  stripe?: { index: number; count: number };
  log: (line: string) => void;
  /** Silence from a peer that makes the fetcher give up on it for that file (default 10 s). */
  idleMs?: number;
}

/** Failures after which a peer is not asked again in this prepare. */
const PEER_STRIKES = 3;
const CONNECTIONS_PER_PEER = 4;

export interface CountingSource extends ProjectSource {
  /** "beta 120.0 MiB, the coordinator 80.0 MiB". */
  summary(): string;
  /** Bytes from peers and from the coordinator so far. */
  readonly counts: { peers: number; coordinator: number };
  close(): void;
}

export function peerSource(opts: PeerSourceOptions): CountingSource {
  const clients = opts.peers.map((peer) => ({ peer, client: new PeerClient({ peer, snapshot: opts.snapshot, key: opts.key, idleMs: opts.idleMs ?? 10_000, maxConnections: CONNECTIONS_PER_PEER }), strikes: 0 }));
  const bytesFrom = new Map<string, number>();
  const counts = { peers: 0, coordinator: 0 };
  const add = (from: string, n: number) => bytesFrom.set(from, (bytesFrom.get(from) ?? 0) + n);
  return {
    name: 'its peers and the coordinator',
    counts,
    manifest: (snapshot) => opts.coordinator.manifest(snapshot),
    arrange: (files) => stripeOrder(files, opts.stripe),
    async blob(snapshot, sha256, size, toFile, onBytes) {
      for (const c of clients) {
        if (c.strikes >= PEER_STRIKES || !c.client.available) continue;
        const got = await c.client.fetch(sha256, size, toFile, onBytes);
        if (got.kind === 'ok') {
          add(c.peer.node, size);
          counts.peers += size;
          return got;
        }
        onBytes(0);
        if (got.kind === 'elsewhere') continue;
        c.strikes++;
        opts.log(`project file ${sha256.slice(0, 12)}… from peer ${c.peer.node} (${c.peer.host}:${c.peer.port}): ${got.why}; ${c.strikes >= PEER_STRIKES ? 'not asking it again' : 'asking the next source'}`);
      }
      const got = await opts.coordinator.blob(snapshot, sha256, size, toFile, onBytes);
      if (got.kind === 'ok') {
        add(opts.coordinator.name, size);
        counts.coordinator += size;
      }
      return got;
    },
    summary: () => [...bytesFrom].map(([from, n]) => `${from} ${binaryBytes(n)}`).join(', ') || 'nothing',
    close: () => clients.forEach((c) => c.client.close()),
  };
}
