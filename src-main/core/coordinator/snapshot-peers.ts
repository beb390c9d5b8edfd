/**
 * Which members a fetcher of a snapshot is told to ask first (issue 23, item 2): the workers that hold the
 * snapshot's key (told to prepare it for a run, or to run a job from it) and those whose cache holds it from an
 * earlier run or job (their heartbeats' `snapshots`), the live ones with a blob server, at the address training
 * reaches them, ranked by the measured link map (rankPeers). A cache holder named as a peer is told once per
 * incarnation to serve the snapshot under its key (`serveSnapshot`). A run's `prepare` and a job's `runJob` name
 * peers the same way, so jobs and runs fetch from each other as well as from the coordinator.
 */
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import { rankPeers, type PeerCandidate, type ProjectPeer } from '../../../src-shared/projects/peer-sources';
import type { ElasticPool } from './elastic-pool';
import { surveyWorkers } from './link-survey';
import { snapshotPeerKey } from './snapshot-peer-key';

export interface SnapshotPeerDeps {
  pool: Pick<ElasticPool, 'allWorkers' | 'queue'>;
  /** Where members reach each other (the rendezvous' choice, as the link survey probes) and the measured links. */
  trustAdvertised?: boolean;
  links?: () => readonly LinkMeasurement[];
}

/** Snapshots a worker is remembered as told to serve; past it the set starts again (telling twice is harmless). */
const MAX_TOLD_TO_SERVE = 64;

/** The live workers among `ids`, where the others reach them (the address training uses) and their blob port. */
function peerCandidates(deps: SnapshotPeerDeps, ids: ReadonlySet<number>): PeerCandidate[] {
  const records = deps.pool.allWorkers().filter((w) => ids.has(w.workerId) && (w.state === 'syncing' || w.state === 'active'));
  const hosts = new Map(surveyWorkers(records.map((r) => ({ ...r, id: r.workerId })), deps.trustAdvertised ?? false).map((s) => [s.id, s.host]));
  return records.map((r) => ({ workerId: r.workerId, node: r.node, host: hosts.get(r.workerId) ?? null, blobPort: r.blobPort ?? null }));
}

export interface PeerPlan {
  peerKey: string;
  /** The peers `fetcherId` asks, best link first; the cache holders among them are told to serve (once). */
  peersFor(fetcherId: number): ProjectPeer[];
}

/** Peers for fetchers of `snapshot`: `holderIds` (given its key already) and the live workers whose cache holds it. */
export function peerPlan(deps: SnapshotPeerDeps, snapshot: string, holderIds: Iterable<number>): PeerPlan {
  const told = new Set(holderIds);
  const cached = new Set(deps.pool.allWorkers().filter((w) => !told.has(w.workerId) && w.heldSnapshots.includes(snapshot)).map((w) => w.workerId));
  const candidates = peerCandidates(deps, new Set([...told, ...cached]));
  const peerKey = snapshotPeerKey(snapshot);
  return {
    peerKey,
    peersFor(fetcherId) {
      const peers = rankPeers(fetcherId, candidates, deps.links?.() ?? []);
      for (const p of peers) if (cached.has(p.workerId)) tellToServe(deps, p.workerId, snapshot, peerKey);
      return peers;
    },
  };
}

function tellToServe(deps: SnapshotPeerDeps, workerId: number, snapshot: string, peerKey: string): void {
  const rec = deps.pool.allWorkers().find((w) => w.workerId === workerId);
  if (!rec || rec.toldToServe.has(snapshot)) return;
  if (rec.toldToServe.size >= MAX_TOLD_TO_SERVE) rec.toldToServe.clear();
  if (deps.pool.queue(workerId, { kind: 'serveSnapshot', snapshot, peerKey })) rec.toldToServe.add(snapshot);
}

/** The peers worker `fetcherId` should ask for `snapshot` (best link first) and the key it proves to them. */
export function snapshotPeers(deps: SnapshotPeerDeps, fetcherId: number, snapshot: string, holderIds: Iterable<number>): { peers: ProjectPeer[]; peerKey: string } {
  const plan = peerPlan(deps, snapshot, holderIds);
  return { peers: plan.peersFor(fetcherId), peerKey: plan.peerKey };
}
