/**
 * The agent's projects on disk: a snapshot's manifest (fetched once, checked against its hash, kept), its files
 * in the blob cache (only those missing fetched, each checked by sha256; one found corrupt is named, dropped and
 * fetched again), free disk checked before any byte moves, and the snapshot unpacked read-only. What a run uses
 * is pinned in the cache; after each fetch the cache is trimmed to its bound and unpacked snapshots that lost a
 * blob to it (and are not in use) go too.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { snapshotManifestSchema, type ProjectFileEntry, type SnapshotManifest } from '../../../src-shared/projects/project-protocol';
import { BlobCache } from '../../platform/projects/blob-cache';
import { binaryBytes, diskShortfall } from '../../platform/projects/disk-space';
import { manifestHash } from '../../platform/projects/manifest-hash';
import { isUnder, projectLayout, snapshotKey, type ProjectLayout } from '../../platform/projects/project-layout';
import { removeStalePartials, removeTree, unpackSnapshot } from '../../platform/projects/snapshot-unpack';
import type { ProjectSource } from './project-source';

/** Bytes fetched so far of those missing, for the `fetching` reports. */
export type FetchProgress = (bytesDone: number, bytesTotal: number) => void;

/** Thrown with a reason a person can act on (the `prepared` failure's detail, a launch's refusal). */
export class ProjectError extends Error {}

export interface FetchOutcome {
  files: number;
  bytes: number;
}

/** How many blobs are fetched at once (many small files should not each wait a round trip). */
const PARALLEL_FETCHES = 4;

export class SnapshotStore {
  readonly layout: ProjectLayout;
  readonly cache: BlobCache;

  constructor(
    dataDir: string,
    cacheBytes: number,
    private readonly log: (line: string) => void,
  ) {
    this.layout = projectLayout(dataDir);
    this.cache = new BlobCache(this.layout.root, cacheBytes);
    mkdirSync(this.layout.manifests, { recursive: true });
    mkdirSync(this.layout.snapshots, { recursive: true });
    removeStalePartials(this.layout.snapshots);
  }

  /** The manifest of `snapshot`: kept from before, or fetched and checked against the hash that names it. */
  async manifest(snapshot: string, source: ProjectSource): Promise<SnapshotManifest> {
    const file = path.join(this.layout.manifests, `${snapshot}.json`);
    try {
      const kept = snapshotManifestSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
      if (manifestHash(kept) === snapshot) return kept;
    } catch {
      // none kept (or unreadable): fetch it
    }
    const got = await source.manifest(snapshot);
    if (!got.ok) throw new ProjectError(`could not fetch the manifest of snapshot ${snapshot.slice(0, 12)}… from ${source.name}: ${got.why}`);
    const hash = manifestHash(got.manifest);
    if (hash !== snapshot) throw new ProjectError(`${source.name} sent a manifest whose hash is ${hash.slice(0, 12)}…, not snapshot ${snapshot.slice(0, 12)}…: not used`);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(got.manifest));
    renameSync(tmp, file);
    return got.manifest;
  }

  /**
   * Has every blob of `files` in the cache, verified: the corrupt ones named and dropped, the missing ones
   * fetched from `source` after the disk is checked. `holder` pins them meanwhile (and after: unpin it).
   */
  async ensureBlobs(snapshot: string, files: readonly ProjectFileEntry[], source: ProjectSource, holder: string, onProgress: FetchProgress): Promise<FetchOutcome> {
    const unique = new Map<string, ProjectFileEntry>();
    for (const f of files) if (!unique.has(f.sha256)) unique.set(f.sha256, f);
    this.cache.pin(holder, unique.keys());
    const missing: ProjectFileEntry[] = [];
    for (const f of unique.values()) {
      const state = await this.cache.verify(f.sha256, f.size);
      if (state === 'ok') continue;
      if (state === 'corrupt') {
        this.log(`project file ${f.path} (blob ${f.sha256.slice(0, 12)}…) in the cache no longer matches its sha256: dropped, fetching it again`);
        this.cache.drop(f.sha256);
        this.dropSnapshotsUsing(new Set([f.sha256]), true);
      }
      missing.push(f);
    }
    const total = missing.reduce((sum, f) => sum + f.size, 0);
    if (missing.length === 0) return { files: 0, bytes: 0 };
    const short = diskShortfall(this.layout.root, total);
    if (short) throw new ProjectError(short);
    const received = new Map<string, number>();
    const done = () => [...received.values()].reduce((a, b) => a + b, 0);
    onProgress(0, total);
    const queue = source.arrange ? source.arrange(missing) : [...missing];
    // The first failure stops the others taking new files, and is reported only once the transfers already under
    // way have ended: a failed prepare must not leave fetches writing into the cache behind it.
    let failure: { error: unknown } | null = null;
    const worker = async () => {
      for (let f = queue.shift(); f && !failure; f = queue.shift()) {
        try {
          await this.fetchBlob(snapshot, f, source, (n) => {
            received.set(f!.sha256, n);
            onProgress(done(), total);
          });
        } catch (error) {
          failure ??= { error };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_FETCHES, missing.length) }, worker));
    if (failure) throw (failure as { error: unknown }).error;
    return { files: missing.length, bytes: total };
  }

  /** One blob into the cache; a transfer that breaks or brings other bytes is tried once more. */
  private async fetchBlob(snapshot: string, f: ProjectFileEntry, source: ProjectSource, onBytes: (n: number) => void): Promise<void> {
    let why = '';
    for (let attempt = 0; attempt < 2; attempt++) {
      const tmp = this.cache.tempPath();
      const result = await source.blob(snapshot, f.sha256, f.size, tmp, onBytes);
      if (result.kind === 'ok') {
        this.cache.adopt(tmp, f.sha256);
        return;
      }
      onBytes(0);
      if (result.kind === 'mismatch') {
        why = `${source.name} sent other bytes for ${f.path} (${result.why}): not kept`;
        this.log(why);
      } else if (result.kind === 'http-error') {
        throw new ProjectError(`could not fetch ${f.path} from ${source.name}: ${result.status} ${result.message}`);
      } else {
        why = `could not fetch ${f.path} from ${source.name}: ${result.error instanceof Error ? result.error.message : String(result.error)}`;
      }
    }
    throw new ProjectError(why);
  }

  /** The folder of `snapshot` unpacked (all of it, or less `skipDataDir`), made now if it is not there. */
  unpack(snapshot: string, manifest: SnapshotManifest, skipDataDir: string | null): string {
    const dest = path.join(this.layout.snapshots, snapshotKey(snapshot, skipDataDir));
    const entries = skipDataDir === null ? manifest.entries : manifest.entries.filter((e) => !isUnder(e.path, skipDataDir));
    try {
      unpackSnapshot({ entries, dest, blobPath: (sha) => this.cache.blobPath(sha) });
    } catch (error) {
      throw new ProjectError(`could not unpack snapshot ${snapshot.slice(0, 12)}…: ${error instanceof Error ? error.message : String(error)}`);
    }
    try {
      const now = new Date();
      utimesSync(dest, now, now); // its time says when it was last used (held() lists the newest first)
    } catch {
      // a folder whose time cannot be set is listed by its older time
    }
    return dest;
  }

  /**
   * The snapshots unpacked here (their files were all in the cache, less a shard-mode data folder), whose
   * manifest is kept: the most recently used first, at most `max`. What the agent advertises as held.
   */
  held(max: number): string[] {
    let names: string[] = [];
    try {
      names = readdirSync(this.layout.snapshots).filter((n) => /^[0-9a-f]{64}($|-)/.test(n));
    } catch {
      return [];
    }
    const used = new Map<string, number>();
    for (const name of names) {
      const snapshot = name.slice(0, 64);
      try {
        const at = statSync(path.join(this.layout.snapshots, name)).mtimeMs;
        if (existsSync(path.join(this.layout.manifests, `${snapshot}.json`))) used.set(snapshot, Math.max(at, used.get(snapshot) ?? 0));
      } catch {
        // removed meanwhile
      }
    }
    return [...used].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, max).map(([snapshot]) => snapshot);
  }

  /** Whether the manifest of `snapshot` is kept here (its files may then be served to peers). */
  hasManifest(snapshot: string): boolean {
    return existsSync(path.join(this.layout.manifests, `${snapshot}.json`));
  }

  /** Marks `files` used now, trims the cache to its bound, and removes unpacked snapshots that lost a blob to it. */
  used(files: readonly ProjectFileEntry[]): void {
    this.cache.touch(files.map((f) => f.sha256));
    const evicted = this.cache.evict();
    if (evicted.length === 0) return;
    this.log(`project cache over its bound: evicted ${evicted.length} least recently used file${evicted.length === 1 ? '' : 's'}`);
    this.dropSnapshotsUsing(new Set(evicted), false);
  }

  /** Unpacked snapshots holding one of `blobs` (hard links share the bytes: a corrupt blob is corrupt there too). */
  private dropSnapshotsUsing(blobs: ReadonlySet<string>, evenPinned: boolean): void {
    let names: string[] = [];
    try {
      names = readdirSync(this.layout.snapshots);
    } catch {
      return;
    }
    for (const name of names) {
      const snapshot = name.slice(0, 64);
      let manifest: SnapshotManifest;
      try {
        manifest = snapshotManifestSchema.parse(JSON.parse(readFileSync(path.join(this.layout.manifests, `${snapshot}.json`), 'utf8')));
      } catch {
        continue;
      }
      const files = manifest.entries.filter((e): e is ProjectFileEntry => e.kind === 'file');
      if (!files.some((f) => blobs.has(f.sha256))) continue;
      if (!evenPinned && files.some((f) => this.cache.isPinned(f.sha256))) continue;
      removeTree(path.join(this.layout.snapshots, name));
    }
  }

  /** "12 files (3.1 MiB)". */
  static describe(outcome: FetchOutcome): string {
    return `${outcome.files} file${outcome.files === 1 ? '' : 's'} (${binaryBytes(outcome.bytes)})`;
  }
}
