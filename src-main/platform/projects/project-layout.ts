/**
 * Where an agent keeps projects in its data folder, named once: the agent writes there, the app's sandbox
 * (platform/runs/sandbox.ts) binds `projects/` read-only and `run-output/` writable into training.
 *
 *   projects/blobs/ab/<sha256>      the cache (blob-cache.ts)         projects/manifests/<snapshot>.json
 *   projects/snapshots/<key>        unpacked snapshots (read-only)    projects/run-data/<run>   a shard run's data
 *   run-output/<run>                what the run's rank 0 writes (GPU_SHARE_OUTPUT_DIR)
 */
import { createHash } from 'node:crypto';
import path from 'node:path';

/** The folders under an agent's data folder, relative to it. */
export const PROJECTS_SUBDIR = 'projects';
export const RUN_OUTPUT_SUBDIR = 'run-output';

/** A run id as one safe folder name. */
export function safeSegment(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120) || 'run';
}

export interface ProjectLayout {
  root: string;
  manifests: string;
  snapshots: string;
  runData: string;
  runOutput: string;
}

export function projectLayout(dataDir: string): ProjectLayout {
  const root = path.join(dataDir, PROJECTS_SUBDIR);
  return { root, manifests: path.join(root, 'manifests'), snapshots: path.join(root, 'snapshots'), runData: path.join(root, 'run-data'), runOutput: path.join(dataDir, RUN_OUTPUT_SUBDIR) };
}

/**
 * The folder name of a snapshot as unpacked: its hash, or (shard mode, its data folder left out) the hash and a
 * short hash of that data folder, since the same snapshot may be held whole for another run.
 */
export function snapshotKey(snapshot: string, skippedDataDir: string | null): string {
  if (skippedDataDir === null) return snapshot;
  return `${snapshot}-without-${createHash('sha256').update(skippedDataDir).digest('hex').slice(0, 12)}`;
}

/** Whether project path `p` lies in the data folder `dataDir` (itself included). */
export function isUnder(p: string, dataDir: string): boolean {
  return p === dataDir || p.startsWith(`${dataDir}/`);
}
