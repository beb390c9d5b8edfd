/**
 * An adapter job's project on this worker: the snapshot the runJob instruction names, fetched where missing (from
 * the peers it names, then the coordinator: `source`) and unpacked read-only by the same store a run uses
 * (snapshot-store.ts), its folder the job's working directory.
 * The files stay pinned in the cache while the attempt lasts; `releaseJobProject` lets them be evicted again.
 */
import { PROJECT_ENV, SNAPSHOT_PYTHON_ENV, type ProjectFileEntry } from '../../../src-shared/projects/project-protocol';
import type { FetchSource } from './project-source';
import { SnapshotStore } from './snapshot-store';

export interface JobProjectLaunch {
  /** The job's working directory: the snapshot's folder. */
  cwd: string;
  env: Record<string, string>;
}

const holderOf = (jobId: string, attempt: number): string => `job:${jobId}:${attempt}`;

/** Everything attempt `attempt` of job `jobId` needs of `snapshot` here. Throws a ProjectError a person can act on. */
export async function readyJobProject(store: SnapshotStore, source: FetchSource, job: { jobId: string; attempt: number; name: string }, snapshot: string, log: (line: string) => void): Promise<JobProjectLaunch> {
  const manifest = await store.manifest(snapshot, source);
  const files = manifest.entries.filter((e): e is ProjectFileEntry => e.kind === 'file');
  const fetched = await store.ensureBlobs(snapshot, files, source, holderOf(job.jobId, job.attempt), () => undefined);
  const from = source.summary ? ` (${source.summary()})` : '';
  const how = fetched.files === 0 ? 'already here: nothing fetched' : `fetched ${SnapshotStore.describe(fetched)} from ${source.name}${from}`;
  log(`job ${job.name}: snapshot ${snapshot.slice(0, 6)}… ${how}`);
  const cwd = store.unpack(snapshot, manifest, null);
  store.used(files);
  return { cwd, env: { ...SNAPSHOT_PYTHON_ENV, [PROJECT_ENV.snapshot]: snapshot } };
}

/** The attempt ended here: its snapshot's files may be evicted again. */
export function releaseJobProject(store: SnapshotStore, job: { jobId: string; attempt: number }): void {
  store.cache.unpin(holderOf(job.jobId, job.attempt));
}
