/**
 * The app's small private files in its data folder (secrets.json, coordinator.json, the TLS identity, the node
 * key, the machine id): read, written and tightened without ever following a symbolic link. Someone who can
 * plant a link there (at the file, or at a predictable `FILE.<pid>.tmp`) would otherwise have the app read a
 * token of their choosing, write its secrets into the link's target, or chmod another file to 0600. So the
 * file is refused when it is a link (SymlinkRefusedError, naming it), a temp file is created exclusively under
 * a random name (O_EXCL fails on any existing name, link or not), and the mode is changed through an
 * O_NOFOLLOW descriptor, never by path.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { errnoCode } from './errno';
import { openNoFollow, refuseSymlink } from './refuse-symlink';

/** The text of `file`, or null when there is none; SymlinkRefusedError when it is a symbolic link. */
export function readPrivateFileSync(file: string, what: string): string | null {
  let fd: number;
  try {
    fd = openNoFollow(file, what, fs.constants.O_RDONLY);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw error;
  }
  try {
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

export async function readPrivateFile(file: string, what: string): Promise<string | null> {
  return readPrivateFileSync(file, what);
}

/** Makes `file` owner-only (0600) through a descriptor that refuses a link; false when it cannot (not ours). */
export function tightenToOwnerOnly(file: string, what: string): boolean {
  if (process.platform === 'win32') return true;
  const fd = openNoFollow(file, what, fs.constants.O_RDONLY);
  try {
    if ((fs.fstatSync(fd).mode & 0o077) !== 0) fs.fchmodSync(fd, 0o600);
    return true;
  } catch {
    return false; // another owner, a read-only disk: still usable
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Replaces `file` with `text`, owner-only, atomically: a temp file beside it created exclusively under a random
 * name, written and fsynced, then renamed over it. A symbolic link at `file` is refused (nothing written).
 */
export function writePrivateFileSync(file: string, text: string, what: string): void {
  refuseSymlink(file, what);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
  try {
    try {
      fs.writeFileSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

export async function writePrivateFile(file: string, text: string, what: string): Promise<void> {
  writePrivateFileSync(file, text, what);
}
