/**
 * A job manifest's `project = "…"` at submission: the folder, relative to the manifest's own, is checked and
 * snapshotted into the coordinator's project store the way a run's is (the same refusals), once per submission,
 * and every job of the manifest gets the snapshot (JobSpec.project). A refusal is a manifest error placed at the
 * `project` line, so the CLI prints it as FILE:LINE:COL and nothing is changed.
 */
import path from 'node:path';
import type { JobManifest, JobProject, ManifestIssue } from '../../../src-shared/jobs/types';
import { isApiProblem } from '../coordinator/common';
import type { TakenSnapshot } from '../projects/project-store';
import { projectFolder } from '../projects/run-project';
import type { ProjectLimits } from '../projects/snapshot-walk';
import type { StateDb } from '../state/state-db';
import type { JobRow } from '../state/jobs-repo';
import type { ProjectPeer } from '../../../src-shared/projects/peer-sources';

/** What job submission needs of the project store (core/projects/project-store.ts). */
export interface JobProjectStore {
  snapshot(root: string, limits?: ProjectLimits): Promise<TakenSnapshot>;
  /** Keeps the store from being pruned until the returned release is called (the jobs naming the snapshot are saved then). */
  hold(): () => void;
}

export type JobProjectResult = { ok: true; project: JobProject & { notes: string[] }; release: () => void } | { ok: false; error: ManifestIssue };

/**
 * Snapshots the manifest's project; `fileName` is the manifest's path as submitted. The caller calls `release`
 * once the jobs naming the snapshot are in the queue.
 */
export async function takeJobProject(store: JobProjectStore | null, fileName: string, project: NonNullable<JobManifest['project']>, limits?: ProjectLimits): Promise<JobProjectResult> {
  const issue = (message: string): JobProjectResult => ({ ok: false, error: { message, line: project.line, col: project.col, path: ['project'] } });
  const given = `project = ${JSON.stringify(project.path)}`;
  if (!store) return issue(`${given}: this coordinator keeps no project snapshots, so jobs cannot ship a project; remove the key`);
  if (!path.isAbsolute(fileName)) {
    return issue(`${given} is relative to the manifest's folder, which is unknown for ${fileName} (a manifest dropped or chosen in a browser tab has no path on the coordinator's machine): submit it on the coordinator's machine with \`gpu-share jobs submit ${fileName}\` or the desktop window's "Submit manifest…"`);
  }
  const dir = path.resolve(path.dirname(fileName), project.path);
  const release = store.hold();
  try {
    const folder = await projectFolder(dir);
    const taken = await store.snapshot(folder, limits);
    return { ok: true, project: { dir: folder, snapshot: taken.hash, notes: taken.warnings }, release };
  } catch (error) {
    release();
    if (!isApiProblem(error)) throw error;
    return issue(`${given} (${dir}, relative to the manifest's folder): ${error.message.replace(/^project: /, '')}`);
  }
}

/** Whether `workerId` holds a claim of a job that runs from `snapshot` (it may then fetch the snapshot). */
export function jobSnapshotHeld(db: StateDb, workerId: number, snapshot: string): boolean {
  return db.jobs.active().some((row) => row.workerId === workerId && row.spec.project?.snapshot === snapshot);
}

/** The snapshots the queue's jobs name (kept when the project store is pruned: a failed job may be requeued). */
export function jobSnapshotsInUse(db: StateDb): Set<string> {
  const used = new Set<string>();
  for (const row of db.jobs.list()) if (row.spec.project) used.add(row.spec.project.snapshot);
  return used;
}

/** Where the coordinator names the members a fetcher of a snapshot asks (RunController.snapshotPeers). */
export interface JobPeerSource {
  snapshotPeers(fetcherId: number, snapshot: string, holderIds: Iterable<number>): { peers: ProjectPeer[]; peerKey: string };
}

/**
 * The peers worker `workerId` fetches the job's snapshot from, as a run's members do: the workers holding another
 * claim of a job that runs from it (they were given its key and fetch or hold it), the live runs' members told
 * to prepare it, ranked by the link map. Undefined: the job has no project, or no coordinator names peers.
 */
export function jobProjectPeers(source: JobPeerSource | undefined, db: StateDb, row: JobRow, workerId: number): { peers: ProjectPeer[]; peerKey: string } | undefined {
  const snapshot = row.spec.project?.snapshot;
  if (!snapshot || !source) return undefined;
  const holders = db.jobs.active().flatMap((r) => (r.id !== row.id && r.workerId !== null && r.spec.project?.snapshot === snapshot ? [r.workerId] : []));
  return source.snapshotPeers(workerId, snapshot, holders);
}
