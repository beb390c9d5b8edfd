/**
 * A snapshot laid out as a folder the trainer runs in: files from the blob cache (hard-linked where they can be,
 * copied otherwise; executable ones always copied, so one blob's mode never changes another snapshot's file),
 * files 0444 or 0555 when executable, folders 0555, links recreated as links once their target is proved to stay
 * inside (link-resolve.ts). Built in a temporary folder and renamed into place, so a crash never leaves a half
 * folder under the final name: a folder under that name is always complete.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import type { ProjectEntry } from '../../../src-shared/projects/project-protocol';
import { resolveLinkInside, type LinkLookup } from '../files/link-resolve';

/** Names of unpacks under way in the snapshots folder; any left by a crash is removed (removeStalePartials). */
const PARTIAL_PREFIX = '.partial-';

/** Removes `dir` and everything in it, read-only folders included; nothing there is fine. */
export function removeTree(dir: string): void {
  const open = (p: string) => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    if (!st.isDirectory()) return;
    chmodSync(p, 0o700);
    for (const name of readdirSync(p)) open(path.join(p, name));
  };
  open(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** Removes unpacks a crash cut short (only one agent uses a data folder at a time). */
export function removeStalePartials(snapshotsDir: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(snapshotsDir);
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(PARTIAL_PREFIX)) removeTree(path.join(snapshotsDir, name));
}

/** A lookup over the manifest's own entries (folders implied by the paths below them). */
function manifestLookup(entries: readonly ProjectEntry[]): LinkLookup {
  const byPath = new Map<string, ProjectEntry>(entries.map((e) => [e.path, e]));
  const dirs = new Set<string>();
  for (const e of entries) {
    const parts = e.path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return (rel) => {
    const entry = byPath.get(rel);
    if (entry) return entry.kind === 'link' ? { kind: 'link', target: entry.target } : { kind: 'file' };
    return dirs.has(rel) ? { kind: 'dir' } : null;
  };
}

/** The links of `entries` whose target leads outside the folder (each named with its target); none: []. */
export function linksLeadingOutside(entries: readonly ProjectEntry[]): string[] {
  const lookup = manifestLookup(entries);
  return entries.filter((e) => e.kind === 'link' && resolveLinkInside(e.path, e.target, lookup) === null).map((e) => `${e.path} -> ${(e as { target: string }).target}`);
}

export interface UnpackOptions {
  entries: readonly ProjectEntry[];
  /** The final folder: made complete or not at all. */
  dest: string;
  /** Where blob `sha256` is (it must be there and verified). */
  blobPath: (sha256: string) => string;
}

/** Makes `dest` from `entries`; an existing `dest` is kept as it is (it is complete). Throws on a link leading outside. */
export function unpackSnapshot(opts: UnpackOptions): void {
  if (existsSync(opts.dest)) return;
  const outside = linksLeadingOutside(opts.entries);
  if (outside.length > 0) throw new Error(`the snapshot has links leading outside its folder (${outside.slice(0, 3).join(', ')}); not unpacked`);
  const parent = path.dirname(opts.dest);
  mkdirSync(parent, { recursive: true });
  const tmp = path.join(parent, `${PARTIAL_PREFIX}${path.basename(opts.dest)}-${randomBytes(4).toString('hex')}`);
  mkdirSync(tmp, { mode: 0o700 });
  try {
    const dirs = new Set<string>();
    for (const entry of opts.entries) {
      const target = path.join(tmp, ...entry.path.split('/'));
      const folder = path.dirname(target);
      if (!dirs.has(folder)) {
        mkdirSync(folder, { recursive: true, mode: 0o700 });
        dirs.add(folder);
      }
      if (entry.kind === 'link') {
        symlinkSync(entry.target, target);
        continue;
      }
      placeFile(opts.blobPath(entry.sha256), target, entry.executable);
    }
    sealFolders(tmp);
    renameSync(tmp, opts.dest);
  } catch (error) {
    removeTree(tmp);
    // Another unpack of the same snapshot won the race: its folder is as good as ours.
    if (existsSync(opts.dest)) return;
    throw error;
  }
}

/** Puts blob `from` at `to`: a hard link (blobs are 0444 already) or, executable or across devices, a 0555 copy. */
export function placeFile(from: string, to: string, executable: boolean): void {
  if (!executable) {
    try {
      linkSync(from, to);
      return;
    } catch {
      // another file system, or links not allowed: a copy
    }
  }
  copyFileSync(from, to);
  chmodSync(to, executable ? 0o555 : 0o444);
}

/** Makes every folder under (and including) `root` 0555, deepest first. */
export function sealFolders(root: string): void {
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (entry.isDirectory()) sealFolders(path.join(root, entry.name));
  }
  chmodSync(root, 0o555);
}
