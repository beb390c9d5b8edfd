/**
 * Files in the app's data folder are never followed through a symbolic link. A link planted at state.db,
 * secrets.json or a key file would otherwise make the app chmod, rename or overwrite whatever the link points
 * at (another user's file, a file outside the folder) with the app's rights. So such a path is refused before it
 * is opened: the link and its target are left exactly as they were, and the message names the file and says what
 * to do. openNoFollow also closes the gap between that check and the open, where the OS can (O_NOFOLLOW).
 */
import fs from 'node:fs';
import { errnoCode } from './errno';

/** A data file that is a symbolic link; `file` is the link, `target` what it points at. */
export class SymlinkRefusedError extends Error {
  constructor(
    readonly file: string,
    readonly what: string,
    readonly target: string,
  ) {
    super(
      `${file} (${what}) is a symbolic link to ${target}: GPU Share does not follow links in its data folder, so it ` +
        'did not open it and left the link and its target untouched. Replace the link with the file itself ' +
        '(or move it away to start afresh), or point --data-dir at another folder.',
    );
    this.name = 'SymlinkRefusedError';
  }
}

function readTarget(file: string): string {
  try {
    return fs.readlinkSync(file);
  } catch {
    return '(unreadable)';
  }
}

/**
 * Throws SymlinkRefusedError when `file` is a symbolic link (lstat: the link itself, never its target). A
 * missing file is fine, as is anything else: what may sit there is the caller's to judge.
 * `what` says what the file is for, e.g. "the state database".
 */
export function refuseSymlink(file: string, what: string): void {
  let stats: fs.Stats;
  try {
    stats = fs.lstatSync(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return;
    throw error;
  }
  if (stats.isSymbolicLink()) throw new SymlinkRefusedError(file, what, readTarget(file));
}

/** O_NOFOLLOW where the platform has it (not on Windows, where 0 adds nothing). */
export const O_NOFOLLOW: number = fs.constants.O_NOFOLLOW ?? 0;

/**
 * fs.openSync that refuses a symbolic link at the last component: with O_NOFOLLOW the OS answers ELOOP, turned
 * into SymlinkRefusedError; without it (Windows), an lstat check just before. `flags` are numeric fs.constants.
 */
export function openNoFollow(file: string, what: string, flags: number, mode?: number): number {
  refuseSymlink(file, what);
  try {
    return fs.openSync(file, flags | O_NOFOLLOW, mode);
  } catch (error) {
    // ELOOP: a link was put there between the check and the open.
    if (errnoCode(error) === 'ELOOP') throw new SymlinkRefusedError(file, what, readTarget(file));
    throw error;
  }
}

/**
 * A stored file opened for reading, never through a link: its descriptor and its size from that descriptor (what
 * is streamed is what a content-length says), or null when there is none, it is a link, or not a regular file.
 */
export function openStoredFile(file: string): { fd: number; sizeBytes: number } | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | O_NOFOLLOW);
  } catch (error) {
    // ELOOP: a symbolic link planted in a store is not what the store keeps.
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ELOOP') return null;
    throw error;
  }
  const stat = fs.fstatSync(fd);
  if (!stat.isFile()) {
    fs.closeSync(fd);
    return null;
  }
  return { fd, sizeBytes: stat.size };
}
