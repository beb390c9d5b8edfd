/**
 * A run's project at its start: the spec checked against the folder (it exists, the script and the data folder
 * are in it), the folder snapshotted into the store, and the run's `project` record with its notes ("unchanged
 * since run X", links left out). What a wrong spec gets is a 400 naming the thing and what to do.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { SnapshotManifest } from '../../../src-shared/projects/project-protocol';
import type { RunProject, RunSpec } from '../../../src-shared/training';
import { ApiProblem } from '../coordinator/common';
import { errnoCode } from '../../platform/files/errno';
import { GPUSHAREIGNORE } from './ignore-rules';
import type { ProjectStore } from './project-store';
import type { ProjectLimits } from './snapshot-walk';

export interface ProjectStart {
  /** The spec as the run keeps it: `project` absolute and normalised, the script relative to it. */
  spec: RunSpec;
  project: RunProject;
  manifest: SnapshotManifest;
}

/** An earlier run of some project (the newest first is what "Run again" compares with). */
export interface EarlierProjectRun {
  runId: string;
  dir: string;
  snapshot: string;
}

const short = (hash: string): string => hash.slice(0, 12);

/** The folder named by `project`, checked: absolute, existing, a folder (400 otherwise, naming it). Job manifests use it too. */
export async function projectFolder(project: string): Promise<string> {
  if (!path.isAbsolute(project)) {
    throw new ApiProblem(400, `project: "${project}" is not an absolute path; give the folder's full path on the coordinator's machine (the CLI resolves --project DIR for you)`);
  }
  const dir = path.resolve(project);
  try {
    const stat = await fs.stat(dir);
    if (!stat.isDirectory()) throw new ApiProblem(400, `project: ${dir} is not a folder; give the project folder that holds the training script`);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') throw new ApiProblem(400, `project: the folder ${dir} does not exist on the coordinator's machine; check the path (it is read where the coordinator runs)`);
    if (errnoCode(error) === 'EACCES') throw new ApiProblem(400, `project: the folder ${dir} cannot be read (permission denied); make it readable for the user running GPU Share`);
    throw error;
  }
  return dir;
}

/** The script (command[0]) relative to the folder; absolute only when it lies inside it. 400 when outside. */
function scriptPath(dir: string, script: string | undefined): string {
  if (!script) throw new ApiProblem(400, 'command: give the training script, relative to the project folder');
  const abs = path.resolve(dir, script);
  const rel = path.relative(dir, abs);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new ApiProblem(400, `command: the script ${script} is outside the project folder ${dir}; give its path relative to the folder (for ${dir}/train.py: train.py)`);
  }
  return rel.split(path.sep).join('/');
}

/** A manifest path's entry, following in-snapshot links (a few hops). */
function resolveEntry(manifest: SnapshotManifest, rel: string): SnapshotManifest['entries'][number] | undefined {
  let at = rel;
  for (let hop = 0; hop < 8; hop++) {
    const entry = manifest.entries.find((e) => e.path === at);
    if (!entry || entry.kind === 'file') return entry;
    at = path.posix.normalize(path.posix.join(path.posix.dirname(at), entry.target));
  }
  return undefined;
}

function checkInSnapshot(dir: string, manifest: SnapshotManifest, script: string, data: string | undefined): void {
  if (resolveEntry(manifest, script)?.kind !== 'file') {
    throw new ApiProblem(
      400,
      `command: the script ${script} is not a file in the snapshot of ${dir}: it does not exist there, or .gitignore / ${GPUSHAREIGNORE} leaves it out; check the name (relative to the folder)`,
    );
  }
  if (data !== undefined) {
    const prefix = `${data.replace(/\/+$/, '')}/`;
    if (!manifest.entries.some((e) => e.kind === 'file' && e.path.startsWith(prefix))) {
      throw new ApiProblem(400, `data: ${data} is not a folder with files in the snapshot of ${dir}: it does not exist, is empty, or is left out by .gitignore / ${GPUSHAREIGNORE}`);
    }
  }
}

/**
 * Checks the spec's project, snapshots the folder into `store`, and says how it compares with the newest earlier
 * run of the same folder. Throws ApiProblem 400 for a wrong spec or a folder that cannot be shipped.
 */
export async function takeRunProject(store: ProjectStore, spec: RunSpec, earlier: readonly EarlierProjectRun[], limits?: ProjectLimits): Promise<ProjectStart> {
  const dir = await projectFolder(spec.project!);
  const script = scriptPath(dir, spec.command[0]);
  if (spec.data === undefined && spec.dataMode === 'shard') throw new ApiProblem(400, 'dataMode: shard splits the data folder over the members; give the data folder too (--data SUBDIR)');
  const taken = await store.snapshot(dir, limits);
  checkInSnapshot(dir, taken.manifest, script, spec.data);
  const notes = [...taken.warnings];
  const before = earlier.find((r) => r.dir === dir);
  if (before && before.snapshot === taken.hash) notes.push(`unchanged since run ${before.runId}: snapshot reused`);
  else if (before) notes.push(`the folder changed since run ${before.runId}: new snapshot ${short(taken.hash)}…`);
  const dataMode = spec.dataMode ?? 'replicate';
  const project: RunProject = {
    dir,
    snapshot: taken.hash,
    files: taken.files,
    bytes: taken.bytes,
    data: spec.data?.replace(/\/+$/, '') ?? null,
    dataMode,
    modules: [],
    notes,
    members: [],
  };
  return { spec: { ...spec, project: dir, command: [script, ...spec.command.slice(1)] }, project, manifest: taken.manifest };
}
