/**
 * The coordinator's project snapshots, in its data folder's `projects/`: each file once, by its sha256
 * (blobs/<2 hex>/<sha256>), and each manifest by its hash (manifests/<hash>.json). Taking a snapshot copies the
 * folder's files in (a file already there by its hash is not copied again), so a later edit of the folder does
 * not change what a run ships. Every write goes through a private temp file and a rename (a crash leaves the old
 * state or the new one), no path is followed through a symbolic link, and only 64-hex names become paths.
 * Bounded: `removeUnreferenced` drops the manifests no kept run names and the blobs no kept manifest names.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import { SHA256_HEX_PATTERN, snapshotManifestSchema, type ProjectEntry, type SnapshotManifest } from '../../../src-shared/projects/project-protocol';
import { manifestHash } from '../../platform/projects/manifest-hash';
import { errnoCode } from '../../platform/files/errno';
import { O_NOFOLLOW, openStoredFile, refuseSymlink } from '../../platform/files/refuse-symlink';
import { ApiProblem } from '../coordinator/common';
import { GPUSHAREIGNORE } from './ignore-rules';
import { walkProject, type ProjectLimits, type WalkedFile } from './snapshot-walk';

export interface TakenSnapshot {
  hash: string;
  manifest: SnapshotManifest;
  files: number;
  bytes: number;
  warnings: string[];
  /** Blobs copied in by this snapshot (0: every file was in the store already). */
  copiedFiles: number;
}

/** Files hashed and copied at once (each streamed: the event loop is never held for a file). */
const HASH_CONCURRENCY = 4;

export class ProjectStore {
  private readonly blobs: string;
  private readonly manifests: string;
  private readonly temp: string;
  /** Parsed manifests by hash (they never change): the routes and the run controller read them often. */
  private readonly manifestCache = new Map<string, SnapshotManifest>();
  /** Holds taken by job submissions under way: their snapshot's files are in, no job names them yet, so nothing is pruned. */
  private holds = 0;

  constructor(readonly dir: string) {
    refuseSymlink(dir, 'the project store');
    this.blobs = path.join(dir, 'blobs');
    this.manifests = path.join(dir, 'manifests');
    this.temp = path.join(dir, 'tmp');
    for (const [sub, what] of [[this.blobs, 'the project store blobs'], [this.manifests, 'the project store manifests'], [this.temp, "the project store's temp folder"]] as const) {
      refuseSymlink(sub, what);
      fs.mkdirSync(sub, { recursive: true, mode: 0o700 });
    }
    // A crash mid-snapshot leaves temp files: nothing else ever writes there.
    for (const name of fs.readdirSync(this.temp)) fs.rmSync(path.join(this.temp, name), { force: true, recursive: true });
  }

  /** Snapshots `root` (absolute, a folder): walks it, copies what the store lacks, writes the manifest. */
  async snapshot(root: string, limits?: ProjectLimits): Promise<TakenSnapshot> {
    const walk = await walkProject(root, limits);
    const files = walk.entries.filter((e): e is WalkedFile => e.kind === 'file');
    const hashed = new Map<string, { sha256: string; size: number; copied: boolean }>();
    const unreadable: string[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < files.length) {
        const file = files[next++]!;
        try {
          hashed.set(file.path, await this.take(path.join(root, file.path)));
        } catch (error) {
          if (errnoCode(error) !== 'EACCES' && errnoCode(error) !== 'EPERM') throw error;
          unreadable.push(file.path);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, files.length) }, worker));
    if (unreadable.length > 0) {
      const shown = unreadable.sort().slice(0, 10).join(', ');
      throw new ApiProblem(400, `the project folder ${root} has files GPU Share cannot read: ${shown}${unreadable.length > 10 ? ` and ${unreadable.length - 10} more` : ''}. Make them readable (chmod u+r), or leave them out in ${path.join(root, GPUSHAREIGNORE)}`);
    }
    const entries: ProjectEntry[] = walk.entries.map((e) =>
      e.kind === 'file' ? { kind: 'file', path: e.path, sha256: hashed.get(e.path)!.sha256, size: hashed.get(e.path)!.size, executable: e.executable } : e,
    );
    const bytes = [...hashed.values()].reduce((sum, h) => sum + h.size, 0);
    const manifest: SnapshotManifest = { version: 1, entries };
    const hash = manifestHash(manifest);
    await this.writeManifest(hash, manifest);
    const copiedFiles = [...hashed.values()].filter((h) => h.copied).length;
    return { hash, manifest, files: walk.files, bytes, warnings: walk.warnings, copiedFiles };
  }

  /** The manifest kept under `hash`, or null. */
  manifest(hash: string): SnapshotManifest | null {
    if (!SHA256_HEX_PATTERN.test(hash)) return null;
    const cached = this.manifestCache.get(hash);
    if (cached) return cached;
    let text: string;
    try {
      const fd = fs.openSync(this.manifestPath(hash), fs.constants.O_RDONLY | O_NOFOLLOW);
      try {
        text = fs.readFileSync(fd, 'utf8');
      } finally {
        fs.closeSync(fd);
      }
    } catch (error) {
      if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ELOOP') return null;
      throw error;
    }
    const parsed = snapshotManifestSchema.safeParse(JSON.parse(text));
    if (!parsed.success || manifestHash(parsed.data) !== hash) return null; // damaged: as good as missing
    this.remember(hash, parsed.data);
    return parsed.data;
  }

  /** A stored blob to stream out and its size, or null when the store has none by that hash. */
  openBlob(sha256: string): { stream: Readable; sizeBytes: number } | null {
    if (!SHA256_HEX_PATTERN.test(sha256)) return null;
    const opened = openStoredFile(this.blobPath(sha256));
    return opened && { stream: fs.createReadStream('', { fd: opened.fd, autoClose: true, start: 0 }), sizeBytes: opened.sizeBytes };
  }

  /** A small stored file as UTF-8 text (a project's requirements.txt), or null when missing or over `maxBytes`. */
  readText(sha256: string, maxBytes = 1024 * 1024): string | null {
    if (!SHA256_HEX_PATTERN.test(sha256)) return null;
    try {
      const fd = fs.openSync(this.blobPath(sha256), fs.constants.O_RDONLY | O_NOFOLLOW);
      try {
        const stat = fs.fstatSync(fd);
        return stat.isFile() && stat.size <= maxBytes ? fs.readFileSync(fd, 'utf8') : null;
      } finally {
        fs.closeSync(fd);
      }
    } catch (error) {
      if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ELOOP') return null;
      throw error;
    }
  }

  /** Keeps `removeUnreferenced` from removing anything until the returned release is called (once). */
  hold(): () => void {
    this.holds += 1;
    let released = false;
    return () => {
      if (!released) this.holds -= 1;
      released = true;
    };
  }

  hasBlob(sha256: string): boolean {
    return SHA256_HEX_PATTERN.test(sha256) && fs.lstatSync(this.blobPath(sha256), { throwIfNoEntry: false })?.isFile() === true;
  }

  /**
   * Keeps only the manifests in `keep` (the snapshots of the runs still kept) and the blobs they name; returns
   * how many manifests and blobs went. Called when runs are deleted or pruned, and at start.
   */
  removeUnreferenced(keep: ReadonlySet<string>): { manifests: number; blobs: number } {
    if (this.holds > 0) return { manifests: 0, blobs: 0 };
    let manifests = 0;
    let blobs = 0;
    const needed = new Set<string>();
    for (const name of fs.readdirSync(this.manifests)) {
      const hash = name.replace(/\.json$/, '');
      const manifest = keep.has(hash) ? this.manifest(hash) : null;
      if (manifest) {
        for (const e of manifest.entries) if (e.kind === 'file') needed.add(e.sha256);
        continue;
      }
      fs.rmSync(path.join(this.manifests, name), { force: true });
      this.manifestCache.delete(hash);
      manifests += 1;
    }
    for (const sub of fs.readdirSync(this.blobs)) {
      const subDir = path.join(this.blobs, sub);
      if (!fs.lstatSync(subDir).isDirectory()) continue;
      for (const name of fs.readdirSync(subDir)) {
        if (needed.has(name)) continue;
        fs.rmSync(path.join(subDir, name), { force: true });
        blobs += 1;
      }
    }
    return { manifests, blobs };
  }

  /**
   * The file's sha256, with its bytes in the store: hashed first (nothing written when the store has them);
   * otherwise copied to a temp file while hashed again, and the copy is kept under the hash of what was copied
   * (a file changed meanwhile is kept as it was copied, and named by that).
   */
  private async take(file: string): Promise<{ sha256: string; size: number; copied: boolean }> {
    const first = await hashFile(file);
    if (this.hasBlob(first.sha256)) return { ...first, copied: false };
    const temp = path.join(this.temp, `blob-${randomBytes(8).toString('hex')}.part`);
    try {
      const hash = createHash('sha256');
      let size = 0;
      const meter = new Transform({ transform: (chunk: Buffer, _e, done) => (hash.update(chunk), (size += chunk.length), done(null, chunk)) });
      await pipeline(await openNoFollowStream(file), meter, fs.createWriteStream(temp, { flags: 'wx', mode: 0o600, flush: true }));
      const sha256 = hash.digest('hex');
      const copied = await this.keep(temp, this.blobPath(sha256));
      return { sha256, size, copied };
    } finally {
      await fs.promises.rm(temp, { force: true });
    }
  }

  /** Links a finished temp file in under its name; a name that exists already keeps its bytes (same hash, same bytes). */
  private async keep(temp: string, target: string): Promise<boolean> {
    await fs.promises.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    refuseSymlink(path.dirname(target), 'a folder of the project store');
    try {
      await fs.promises.link(temp, target);
      return true;
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
      return false;
    }
  }

  private async writeManifest(hash: string, manifest: SnapshotManifest): Promise<void> {
    this.remember(hash, manifest);
    const target = this.manifestPath(hash);
    if (fs.lstatSync(target, { throwIfNoEntry: false })?.isFile()) return;
    const temp = path.join(this.temp, `manifest-${randomBytes(8).toString('hex')}.part`);
    try {
      await fs.promises.writeFile(temp, JSON.stringify(manifest), { flag: 'wx', mode: 0o600, flush: true });
      await this.keep(temp, target);
    } finally {
      await fs.promises.rm(temp, { force: true });
    }
  }

  private remember(hash: string, manifest: SnapshotManifest): void {
    this.manifestCache.set(hash, manifest);
    // Bounded: a few dozen runs' manifests at most matter at once.
    if (this.manifestCache.size > 64) this.manifestCache.delete(this.manifestCache.keys().next().value!);
  }

  private blobPath(sha256: string): string {
    return path.join(this.blobs, sha256.slice(0, 2), sha256);
  }

  private manifestPath(hash: string): string {
    return path.join(this.manifests, `${hash}.json`);
  }
}

/** sha256 (hex) of a file's bytes, streamed; never through a link. */
async function hashFile(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of await openNoFollowStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/** A read stream of `file` opened without following a link at its last component (a file swapped for one meanwhile). */
async function openNoFollowStream(file: string): Promise<Readable> {
  const handle = await fs.promises.open(file, fs.constants.O_RDONLY | O_NOFOLLOW);
  return handle.createReadStream({ autoClose: true });
}
