/** What the peer-fetch tests share: a coordinator stand-in that counts what it served, and a member's cache filled by hand. */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SnapshotManifest } from '../../../../src-shared/projects/project-protocol';
import type { ProjectSource } from '../../../../src-main/agent/project/project-source';
import { SnapshotStore } from '../../../../src-main/agent/project/snapshot-store';
import { manifestHash } from '../../../../src-main/platform/projects/manifest-hash';

export const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** The coordinator: serves the manifests given and every file of `files`, counting the files it sent. */
export function countingCoordinator(manifests: readonly SnapshotManifest[], files: readonly Buffer[]): ProjectSource & { served: string[] } {
  const byHash = new Map(manifests.map((m) => [manifestHash(m), m]));
  const all = new Map(files.map((b) => [sha(b), b]));
  const served: string[] = [];
  return {
    name: 'the coordinator',
    served,
    manifest: (s) => Promise.resolve(byHash.has(s) ? { ok: true, manifest: byHash.get(s)! } : { ok: false, why: 'unknown snapshot' }),
    blob: (_s, sha256, _size, toFile) => {
      served.push(sha256);
      fs.writeFileSync(toFile, all.get(sha256)!);
      return Promise.resolve({ kind: 'ok', bytes: all.get(sha256)!.length });
    },
  };
}

/** A member's store at `dataDir` that already holds `manifest` and `files` (it fetched them earlier). */
export function storeHolding(dataDir: string, manifest: SnapshotManifest, files: readonly Buffer[], log: (line: string) => void): SnapshotStore {
  const held = new SnapshotStore(dataDir, 1 << 30, log);
  fs.writeFileSync(path.join(held.layout.manifests, `${manifestHash(manifest)}.json`), JSON.stringify(manifest));
  for (const b of files) {
    const tmp = held.cache.tempPath();
    fs.writeFileSync(tmp, b);
    held.cache.adopt(tmp, sha(b));
  }
  return held;
}
