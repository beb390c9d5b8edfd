/**
 * Which members a fetcher of a snapshot is told to ask first (issue 23, item 2): the workers that hold the
 * snapshot's key (told to prepare it for a run, or to run a job from it) and those whose cache holds it, or a
 * snapshot sharing files with it, from an earlier run or job (their heartbeats' `snapshots`), the live ones with a
 * blob server, at the address training reaches them, ranked by the measured link map (rankPeers). A cache holder
 * named as a peer is told once per incarnation to serve the snapshot under its key (`serveSnapshot`; for an
 * overlapping one, the shared files only). A run's `prepare` and a job's `runJob` name peers the same way.
 */
import type { LinkMeasurement } from '../../../../src-shared/links/link-matrix';
import { rankPeers, type PeerCandidate, type ProjectPeer } from '../../../../src-shared/projects/peer-sources';
import type { SnapshotManifest } from '../../../../src-shared/projects/project-protocol';
import type { Membership } from '../membership';
import { surveyWorkers } from './link-survey';
import { snapshotPeerKey } from './snapshot-peer-key';

export interface SnapshotPeerDeps {
  pool: Pick<Membership, 'allWorkers' | 'queue'>;
  /** Where members reach each other (the rendezvous' choice, as the link survey probes) and the measured links. */
  trustAdvertised?: boolean;
  links?: () => readonly LinkMeasurement[];
  /** The coordinator's snapshot manifests, to find cached snapshots that share files with the one fetched. */
  files?: { manifest(snapshot: string): SnapshotManifest | null } | null;
}

/** Snapshots a worker is remembered as told to serve; past it the set starts again (telling twice is harmless). */
const MAX_TOLD_TO_SERVE = 64;
/** Shared files one `serveSnapshot` names at most (the schema's bound). */
const MAX_SERVE_BLOBS = 2048;

/** The live workers among `ids`, where the others reach them (the address training uses) and their blob port. */
function peerCandidates(deps: SnapshotPeerDeps, ids: ReadonlySet<number>): PeerCandidate[] {
  const records = deps.pool.allWorkers().filter((w) => ids.has(w.workerId) && (w.state === 'syncing' || w.state === 'active'));
  const hosts = new Map(surveyWorkers(records.map((r) => ({ ...r, id: r.workerId })), deps.trustAdvertised ?? false).map((s) => [s.id, s.host]));
  return records.map((r) => ({ workerId: r.workerId, node: r.node, host: hosts.get(r.workerId) ?? null, blobPort: r.blobPort ?? null }));
}

/**
 * Workers not in `skip` whose cache holds `snapshot` (null: all of it) or another snapshot sharing files with it
 * (the shared files of the one sharing the most bytes).
 */
function cacheHolders(deps: SnapshotPeerDeps, snapshot: string, skip: ReadonlySet<number>): Map<number, string[] | null> {
  const out = new Map<number, string[] | null>();
  const target = deps.files?.manifest(snapshot) ?? null;
  const wanted = new Map(target?.entries.flatMap((e) => (e.kind === 'file' ? [[e.sha256, e.size] as const] : [])) ?? []);
  const shared = new Map<string, { blobs: string[]; bytes: number }>();
  const sharedWith = (held: string) => {
    let got = shared.get(held);
    if (!got) {
      const blobs = [...new Set(deps.files?.manifest(held)?.entries.flatMap((e) => (e.kind === 'file' && wanted.has(e.sha256) ? [e.sha256] : [])) ?? [])];
      got = { blobs: blobs.slice(0, MAX_SERVE_BLOBS), bytes: blobs.reduce((n, b) => n + wanted.get(b)!, 0) };
      shared.set(held, got);
    }
    return got;
  };
  for (const w of deps.pool.allWorkers()) {
    if (skip.has(w.workerId) || w.heldSnapshots.length === 0) continue;
    if (w.heldSnapshots.includes(snapshot)) {
      out.set(w.workerId, null);
      continue;
    }
    if (wanted.size === 0) continue;
    const best = w.heldSnapshots.map(sharedWith).reduce((a, b) => (b.bytes > a.bytes ? b : a), { blobs: [], bytes: 0 });
    if (best.blobs.length > 0) out.set(w.workerId, best.blobs);
  }
  return out;
}

export interface PeerPlan {
  peerKey: string;
  /** The peers `fetcherId` asks, best link first; the cache holders among them are told to serve (once). */
  peersFor(fetcherId: number): ProjectPeer[];
}

/** Peers for fetchers of `snapshot`: `holderIds` (given its key already) and the live workers whose cache holds it; worked out at first use. */
export function peerPlan(deps: SnapshotPeerDeps, snapshot: string, holderIds: Iterable<number>): PeerPlan {
  const told = new Set(holderIds);
  const peerKey = snapshotPeerKey(snapshot);
  let known: { cached: Map<number, string[] | null>; candidates: PeerCandidate[] } | null = null;
  return {
    peerKey,
    peersFor(fetcherId) {
      if (!known) {
        const cached = cacheHolders(deps, snapshot, told);
        known = { cached, candidates: peerCandidates(deps, new Set([...told, ...cached.keys()])) };
      }
      const peers = rankPeers(fetcherId, known.candidates, deps.links?.() ?? []);
      for (const p of peers) if (known.cached.has(p.workerId)) tellToServe(deps, p.workerId, snapshot, peerKey, known.cached.get(p.workerId)!);
      return peers;
    },
  };
}

function tellToServe(deps: SnapshotPeerDeps, workerId: number, snapshot: string, peerKey: string, blobs: string[] | null): void {
  const rec = deps.pool.allWorkers().find((w) => w.workerId === workerId);
  if (!rec || rec.toldToServe.has(snapshot)) return;
  if (rec.toldToServe.size >= MAX_TOLD_TO_SERVE) rec.toldToServe.clear();
  if (deps.pool.queue(workerId, { kind: 'serveSnapshot', snapshot, peerKey, ...(blobs ? { blobs } : {}) })) rec.toldToServe.add(snapshot);
}

/** The peers worker `fetcherId` should ask for `snapshot` (best link first) and the key it proves to them. */
export function snapshotPeers(deps: SnapshotPeerDeps, fetcherId: number, snapshot: string, holderIds: Iterable<number>): { peers: ProjectPeer[]; peerKey: string } {
  const plan = peerPlan(deps, snapshot, holderIds);
  return { peers: plan.peersFor(fetcherId), peerKey: plan.peerKey };
}
