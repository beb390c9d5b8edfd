/**
 * The state database as a file: what may sit at its path, owner-only permissions, and moving a damaged file
 * aside (with its -wal and -shm companions, which belong to it and must never be replayed onto a fresh file).
 * A symbolic link at any of those paths is refused, never followed: chmod or rename through it would change the
 * file it points at.
 */
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, renameSync, type Stats } from 'node:fs';
import { openNoFollow, refuseSymlink } from '../../platform/files/refuse-symlink';
import { StateDbPathError } from './state-db-errors';

/** The files SQLite keeps beside the database in WAL mode. */
export const COMPANION_SUFFIXES = ['-wal', '-shm'] as const;

function kindOf(stats: Stats): string | null {
  if (stats.isFile()) return null;
  if (stats.isDirectory()) return 'directory';
  if (stats.isFIFO()) return 'FIFO (named pipe)';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device';
  return 'special file';
}

/**
 * Throws SymlinkRefusedError when the database or one of its companions is a symbolic link (the link and its
 * target are left untouched), and StateDbPathError at once when the path holds anything but a regular file;
 * SQLite would block on a FIFO or fail obscurely on the rest. A missing file is fine: it is created.
 */
export function checkStatePath(file: string): void {
  refuseSymlink(file, 'the state database');
  for (const suffix of COMPANION_SUFFIXES) refuseSymlink(`${file}${suffix}`, `the state database's ${suffix.slice(1)} file`);
  let stats: Stats;
  try {
    stats = lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const kind = kindOf(stats);
  if (kind !== null) throw new StateDbPathError(file, kind);
}

/**
 * Creates the file owner-only (0600) before SQLite opens it, so its -wal and -shm (which SQLite creates with
 * the database's permissions) are owner-only too; tightens a file that an older build left readable by others.
 */
export function ensureOwnerOnlyFile(file: string, dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // O_NOFOLLOW, and the mode fixed through the open descriptor: never through a path a link could redirect.
  const fd = openNoFollow(file, 'the state database', constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND, 0o600);
  try {
    if (process.platform !== 'win32' && (fstatSync(fd).mode & 0o077) !== 0) fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

/** A file-name-safe UTC stamp: 2025-03-01T09-30-00-123Z. */
export function fileStamp(now: number): string {
  return new Date(now).toISOString().replace(/[:.]/g, '-');
}

/** Renames the database and its companions to <file>.corrupt-<stamp>[-wal|-shm]; returns the new database path. */
export function moveAside(file: string, now: number): string {
  const target = `${file}.corrupt-${fileStamp(now)}`;
  // Checked at open already; checked again so a link is never what gets renamed aside.
  refuseSymlink(file, 'the state database');
  renameSync(file, target);
  for (const suffix of COMPANION_SUFFIXES) {
    try {
      renameSync(`${file}${suffix}`, `${target}${suffix}`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return target;
}
