/**
 * A run's project at launch: the snapshot's folder is the trainer's working directory; its data folder is the
 * snapshot's own (replicate) or, in shard mode, a folder made for this run holding exactly the plan's files
 * (fetched first when missing, hard links from the cache, read-only); the trainer is told where all of it is
 * (PROJECT_ENV: docs/api.md "Your own project"). The run's blobs stay pinned in the cache until it ends.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DATA_FILES_ENV_MAX, PROJECT_ENV, SNAPSHOT_PYTHON_ENV, type LaunchProject, type ProjectFileEntry } from '../../../src-shared/projects/project-protocol';
import { isUnder, safeSegment } from '../../platform/projects/project-layout';
import { placeFile, removeTree, sealFolders } from '../../platform/projects/snapshot-unpack';
import type { FetchSource } from './project-source';
import { ProjectError, SnapshotStore, type FetchProgress } from './snapshot-store';

export interface RunProjectLaunch {
  /** The trainer's working directory: the snapshot's folder. */
  cwd: string;
  /** PROJECT_ENV's variables for this member. */
  env: Record<string, string>;
}

/** The folder a run's rank 0 writes its result to (GPU_SHARE_OUTPUT_DIR), the same for every generation. */
export function runOutputDir(store: SnapshotStore, runId: string): string {
  return path.join(store.layout.runOutput, safeSegment(runId));
}

/**
 * Everything `project` needs on this member before run `runId` launches: the snapshot (fetched if a prepare did
 * not), shard data files, the data and output folders. Throws a ProjectError a person can act on.
 */
export async function readyRunProject(store: SnapshotStore, source: FetchSource, runId: string, project: LaunchProject, log: (line: string) => void, onProgress: FetchProgress = () => undefined): Promise<RunProjectLaunch> {
  const { snapshot, dataDir } = project;
  const shard = project.dataMode === 'shard' && dataDir !== null;
  const holder = `run:${runId}`;
  const manifest = await store.manifest(snapshot, source);
  const all = manifest.entries.filter((e): e is ProjectFileEntry => e.kind === 'file');
  const code = shard ? all.filter((f) => !isUnder(f.path, dataDir)) : all;
  const dataFiles = dataDir === null ? [] : shard ? pickShard(all, dataDir, project.dataFiles ?? [], snapshot) : all.filter((f) => isUnder(f.path, dataDir));
  store.cache.unpin(holder); // a newer generation of the run: its own files from now on
  const fetched = await store.ensureBlobs(snapshot, shard ? [...code, ...dataFiles] : code, source, holder, onProgress);
  const from = source.summary ? ` (${source.summary()})` : '';
  if (fetched.files > 0) log(`run ${runId}: fetched ${SnapshotStore.describe(fetched)} of snapshot ${snapshot.slice(0, 6)}… from ${source.name}${from}`);
  const folder = store.unpack(snapshot, manifest, shard ? dataDir : null);
  store.used(shard ? [...code, ...dataFiles] : code);
  const output = runOutputDir(store, runId);
  mkdirSync(output, { recursive: true, mode: 0o700 });
  const env: Record<string, string> = { ...SNAPSHOT_PYTHON_ENV, [PROJECT_ENV.snapshot]: snapshot, [PROJECT_ENV.outputDir]: output };
  if (dataDir !== null) {
    const dir = shard ? shardFolder(store, runId, dataDir, dataFiles) : path.join(folder, ...dataDir.split('/'));
    env[PROJECT_ENV.dataDir] = dir;
    Object.assign(env, dataFilesEnv(store, runId, dataFiles.map((f) => f.path.slice(dataDir.length + 1)), log));
  }
  return { cwd: folder, env };
}

/**
 * The member's data file names: always in a JSON file (GPU_SHARE_DATA_FILES_PATH), and in GPU_SHARE_DATA_FILES too
 * while they fit in one environment variable (a longer one would make the trainer's start fail with E2BIG).
 */
function dataFilesEnv(store: SnapshotStore, runId: string, names: readonly string[], log: (line: string) => void): Record<string, string> {
  const json = JSON.stringify(names);
  const file = path.join(store.layout.runData, `${safeSegment(runId)}.files.json`);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, json, { mode: 0o600 });
  if (Buffer.byteLength(json) <= DATA_FILES_ENV_MAX) return { [PROJECT_ENV.dataFiles]: json, [PROJECT_ENV.dataFilesPath]: file };
  log(`run ${runId}: the names of this member's ${names.length} data files (${Math.ceil(Buffer.byteLength(json) / 1024)} KiB) are more than one environment variable may hold: ${PROJECT_ENV.dataFiles} is not set; the trainer reads them from ${PROJECT_ENV.dataFilesPath} (docs/api.md "Your own project")`);
  return { [PROJECT_ENV.dataFilesPath]: file };
}

/** The manifest's entries of the plan's shard files (names relative to the data folder), in the plan's order. */
function pickShard(all: readonly ProjectFileEntry[], dataDir: string, names: readonly string[], snapshot: string): ProjectFileEntry[] {
  const byPath = new Map(all.map((f) => [f.path, f]));
  return names.map((name) => {
    const entry = byPath.get(`${dataDir}/${name}`);
    if (!entry) throw new ProjectError(`the launch plan names data file ${dataDir}/${name}, which snapshot ${snapshot.slice(0, 12)}… does not hold`);
    return entry;
  });
}

/** A fresh read-only folder holding exactly `files` (at their paths under the data folder), for this generation. */
function shardFolder(store: SnapshotStore, runId: string, dataDir: string, files: readonly ProjectFileEntry[]): string {
  const dir = path.join(store.layout.runData, safeSegment(runId));
  removeTree(dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const f of files) {
    const to = path.join(dir, ...f.path.slice(dataDir.length + 1).split('/'));
    mkdirSync(path.dirname(to), { recursive: true, mode: 0o700 });
    placeFile(store.cache.blobPath(f.sha256), to, f.executable);
  }
  sealFolders(dir);
  return dir;
}

/** The run ended on this member: its files may be evicted again (its shard folder stays until its next launch). */
export function releaseRunProject(store: SnapshotStore, runId: string): void {
  store.cache.unpin(`run:${runId}`);
}
