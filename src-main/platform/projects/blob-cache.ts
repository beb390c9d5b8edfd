/**
 * The agent's store of project files by content (sha256), so a file shared by two snapshots, or by two runs of an
 * unchanged project, is fetched once. Bounded: past `maxBytes` the least recently used blobs go first, never one a
 * snapshot in use holds (pinned while a run trains on it or a prepare is on its way). Last use is the blob's mtime
 * (touched on each use), so the order survives a restart without an index to keep consistent. Blobs are 0444;
 * one that no longer hashes to its name (a disk fault, a hand edit) is found by verify() and dropped.
 *
 *   <root>/blobs/ab/abcdef…   the files        <root>/tmp/   downloads on their way (cleared at start)
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync, chmodSync } from 'node:fs';
import path from 'node:path';

export const DEFAULT_PROJECT_CACHE_BYTES = 10 * 1024 * 1024 * 1024;

export type BlobState = 'ok' | 'missing' | 'corrupt';

export class BlobCache {
  private readonly blobsDir: string;
  private readonly tmpDir: string;
  /** Pins by holder (a run, a prepare): the blobs each holds. */
  private readonly pins = new Map<string, Set<string>>();

  constructor(
    readonly root: string,
    private readonly maxBytes: number = DEFAULT_PROJECT_CACHE_BYTES,
  ) {
    this.blobsDir = path.join(root, 'blobs');
    this.tmpDir = path.join(root, 'tmp');
    rmSync(this.tmpDir, { recursive: true, force: true }); // a download a crash cut short is never a blob
    mkdirSync(this.blobsDir, { recursive: true });
    mkdirSync(this.tmpDir, { recursive: true });
  }

  blobPath(sha256: string): string {
    return path.join(this.blobsDir, sha256.slice(0, 2), sha256);
  }

  /** A fresh name in the cache's temporary folder (same file system as the blobs: renamed in, never copied). */
  tempPath(): string {
    return path.join(this.tmpDir, `${Date.now()}-${randomBytes(6).toString('hex')}`);
  }

  has(sha256: string): boolean {
    try {
      return statSync(this.blobPath(sha256)).isFile();
    } catch {
      return false;
    }
  }

  /** Whether the blob is there and still hashes to its name (and has `size` bytes when given). */
  async verify(sha256: string, size?: number): Promise<BlobState> {
    const file = this.blobPath(sha256);
    let actual: number;
    try {
      actual = statSync(file).size;
    } catch {
      return 'missing';
    }
    if (size !== undefined && actual !== size) return 'corrupt';
    const got = await new Promise<string | null>((resolve) => {
      const hash = createHash('sha256');
      createReadStream(file)
        .on('data', (chunk) => hash.update(chunk))
        .on('end', () => resolve(hash.digest('hex')))
        .on('error', () => resolve(null));
    });
    return got === sha256 ? 'ok' : 'corrupt';
  }

  /** Takes a verified download in as blob `sha256` (read-only, used now). */
  adopt(tempFile: string, sha256: string): void {
    const target = this.blobPath(sha256);
    mkdirSync(path.dirname(target), { recursive: true });
    chmodSync(tempFile, 0o444);
    renameSync(tempFile, target);
  }

  /** Removes a blob (corrupt, or evicted). */
  drop(sha256: string): void {
    rmSync(this.blobPath(sha256), { force: true });
  }

  /** Marks blobs as used now: the last to be evicted. */
  touch(sha256s: Iterable<string>): void {
    const now = new Date();
    for (const sha of sha256s) {
      try {
        utimesSync(this.blobPath(sha), now, now);
      } catch {
        // gone meanwhile: nothing to order
      }
    }
  }

  /** Keeps `sha256s` from eviction until `holder` is unpinned (a holder pinned again adds to its set). */
  pin(holder: string, sha256s: Iterable<string>): void {
    const set = this.pins.get(holder) ?? new Set<string>();
    for (const sha of sha256s) set.add(sha);
    this.pins.set(holder, set);
  }

  unpin(holder: string): void {
    this.pins.delete(holder);
  }

  isPinned(sha256: string): boolean {
    for (const set of this.pins.values()) if (set.has(sha256)) return true;
    return false;
  }

  /** Every blob with its size and last use, oldest use first. */
  list(): { sha256: string; size: number; usedMs: number }[] {
    const out: { sha256: string; size: number; usedMs: number }[] = [];
    for (const prefix of safeReaddir(this.blobsDir)) {
      for (const name of safeReaddir(path.join(this.blobsDir, prefix))) {
        try {
          const st = statSync(path.join(this.blobsDir, prefix, name));
          if (st.isFile()) out.push({ sha256: name, size: st.size, usedMs: st.mtimeMs });
        } catch {
          // removed meanwhile
        }
      }
    }
    return out.sort((a, b) => a.usedMs - b.usedMs || (a.sha256 < b.sha256 ? -1 : 1));
  }

  /** Bytes the blobs take now. */
  totalBytes(): number {
    return this.list().reduce((sum, blob) => sum + blob.size, 0);
  }

  /** Drops least recently used unpinned blobs until the cache is within its bound; answers what went. */
  evict(): string[] {
    const blobs = this.list();
    let total = blobs.reduce((sum, blob) => sum + blob.size, 0);
    const evicted: string[] = [];
    for (const blob of blobs) {
      if (total <= this.maxBytes) break;
      if (this.isPinned(blob.sha256)) continue;
      this.drop(blob.sha256);
      total -= blob.size;
      evicted.push(blob.sha256);
    }
    return evicted;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
