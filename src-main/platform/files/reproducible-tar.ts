/**
 * Packs a folder as a reproducible .tar.gz: the same contents give the same bytes, whoever made them and when,
 * so the coordinator's content-addressed store keeps bit-identical job outputs once. What varies between two
 * runs of the same trainer is removed: entry order (names sorted), times (mtime 0, no atime/ctime), owners
 * (uid/gid 0, no user or group names), the umask (0644 files, 0755 folders and executables), hard links
 * (always stored as files) and the gzip header's time and name. The sha256 is computed while the file is
 * written, so the archive is read once.
 *
 * A symlink is packed as a link, never followed; one leading outside the folder refuses the whole pack (it
 * would let a trainer hand out any file of the worker). Where a link leads is resolved the way the file system
 * resolves it (link-resolve.ts: every link on the way followed before a `..` applies), not read as text: `t ->
 * d/s/..` with `d/s -> ..` leads outside although its text does not. The coordinator checks an uploaded tarball
 * with the same rule. Sockets, FIFOs and devices are skipped.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, lstatSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Pack, type WriteEntry } from 'tar';
import { errnoCode } from './errno';
import { resolveLinkInside, type LinkLookup } from './link-resolve';

export interface PackedTar {
  sha256: string;
  sizeBytes: number;
  /** Entries packed, in archive order (folders end in "/"). */
  entries: string[];
}

/** Why a folder cannot be packed; the message names the entry and what to do. */
export class PackRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PackRefusedError';
  }
}

const FIXED_MTIME = new Date(0);

/** Every entry under `root` to pack, relative with "/" separators, sorted by code unit so every machine agrees. */
export function listPackable(root: string): string[] {
  const found: string[] = [];
  const walk = (relative: string) => {
    for (const name of readdirSync(path.join(root, relative))) {
      const rel = relative ? `${relative}/${name}` : name;
      const full = path.join(root, rel);
      const stat = lstatSync(full);
      if (stat.isDirectory()) {
        found.push(rel);
        walk(rel);
      } else if (stat.isSymbolicLink()) {
        checkLinkInside(root, rel, readlinkSync(full));
        found.push(rel);
      } else if (stat.isFile()) {
        found.push(rel);
      } // sockets, FIFOs, devices: not output anyone can download
    }
  };
  walk('');
  return found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** What sits at a path under `root`, by lstat: links are reported with their text, never followed. */
function lookupUnder(root: string): LinkLookup {
  return (rel) => {
    const full = path.join(root, ...rel.split('/'));
    let stat: Stats;
    try {
      stat = lstatSync(full);
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw error;
    }
    if (stat.isSymbolicLink()) return { kind: 'link', target: readlinkSync(full) };
    return { kind: stat.isDirectory() ? 'dir' : stat.isFile() ? 'file' : 'other' };
  };
}

function checkLinkInside(root: string, rel: string, target: string): void {
  if (resolveLinkInside(rel, target, lookupUnder(root)) === null) {
    throw new PackRefusedError(
      `${rel} is a symbolic link to ${target}, which leads outside the output folder once the links on its way are followed (or loops); copy the file into the folder instead of linking to it`,
    );
  }
}

/** 0755 for folders and anything executable by someone, 0644 for the rest: the umask of the machine is not part of the output. */
function normalMode(stat: Stats): number {
  const typeBits = stat.mode & ~0o7777;
  const executable = stat.isDirectory() || (stat.mode & 0o111) !== 0;
  return typeBits | (executable ? 0o755 : 0o644);
}

/** A link cache that never remembers: a hard-linked file is stored whole, like a copy of it would be. */
class ForgetfulMap<K, V> extends Map<K, V> {
  override set(): this {
    return this;
  }
}

/** Packs `root` into `outFile` (created or replaced) and returns the archive's sha256 and size. */
export async function packReproducibleTar(root: string, outFile: string): Promise<PackedTar> {
  const entries = listPackable(root);
  const pack = new Pack({
    cwd: root,
    gzip: { level: 9 },
    portable: true,
    noDirRecurse: true,
    mtime: FIXED_MTIME,
    linkCache: new ForgetfulMap(),
    strict: true,
    onWriteEntry: (entry: WriteEntry) => {
      // portable leaves folders without an mtime field; a fixed 0 reads the same everywhere.
      entry.noMtime = false;
      entry.mtime = FIXED_MTIME;
      if (entry.stat) entry.stat.mode = normalMode(entry.stat);
    },
  });
  const hash = createHash('sha256');
  let sizeBytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      sizeBytes += chunk.length;
      done(null, chunk);
    },
  });
  const written = pipeline(pack, tap, createWriteStream(outFile));
  for (const entry of entries) pack.add(entry);
  pack.end();
  await written;
  return { sha256: hash.digest('hex'), sizeBytes, entries: entries.map((e) => (lstatSync(path.join(root, e)).isDirectory() ? `${e}/` : e)) };
}
