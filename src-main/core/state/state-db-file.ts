/**
 * The state database as a file: what may sit at its path, owner-only permissions, and moving a damaged file
 * aside (with its -wal and -shm companions, which belong to it and must never be replayed onto a fresh file).
 */
import { chmodSync, closeSync, mkdirSync, openSync, renameSync, statSync, type Stats } from 'node:fs';
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
 * Throws StateDbPathError at once when the path holds anything but a regular file (following a symlink);
 * SQLite would block on a FIFO or fail obscurely on the rest. A missing file is fine: it is created.
 */
export function checkStatePath(file: string): void {
  let stats: Stats;
  try {
    stats = statSync(file);
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
  closeSync(openSync(file, 'a', 0o600));
  if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
}

/** A file-name-safe UTC stamp: 2025-03-01T09-30-00-123Z. */
export function fileStamp(now: number): string {
  return new Date(now).toISOString().replace(/[:.]/g, '-');
}

/** Renames the database and its companions to <file>.corrupt-<stamp>[-wal|-shm]; returns the new database path. */
export function moveAside(file: string, now: number): string {
  const target = `${file}.corrupt-${fileStamp(now)}`;
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
