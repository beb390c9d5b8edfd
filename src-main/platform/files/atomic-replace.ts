/**
 * Replaces a file so that a crash or power cut at any moment leaves either the old file or the new one: the
 * text goes to a temp file in the same folder (same file system, so rename is atomic), is fsynced, and is
 * renamed over the target, keeping its mode. The previous version can be kept as FILE.bak. A file the person
 * made read-only is not replaced (rename would do it regardless of the file's own permissions).
 */
import { randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { errnoCode, isPidAlive } from './errno';

/** The target is read-only for us; it was left exactly as it was. */
export class ReadOnlyFileError extends Error {
  constructor(readonly filePath: string, mode: number) {
    super(
      `${filePath} is read-only (mode ${(mode & 0o777).toString(8).padStart(4, '0')}), so it was not changed; make it writable (chmod u+w ${filePath}) and try again, or point GPU Share at another file`,
    );
    this.name = 'ReadOnlyFileError';
  }
}


/** Follows a symlink so the link stays a link and its target is what gets replaced. */
export async function realTarget(filePath: string): Promise<string> {
  try {
    return await fs.realpath(filePath);
  } catch {
    return filePath;
  }
}

/**
 * Throws ReadOnlyFileError when the existing file has no write permission for us. Checked on the mode bits
 * as well as with access(): root may write anything, but a file its owner marked read-only is a decision.
 */
export async function assertWritable(target: string): Promise<void> {
  const stat = await fs.stat(target).catch(() => null);
  if (!stat) return;
  const writableBits = process.getuid?.() === 0 || process.getuid?.() === stat.uid ? stat.mode & 0o200 : stat.mode & 0o022;
  const permitted = await fs.access(target, constants.W_OK).then(
    () => true,
    () => false,
  );
  if (!writableBits || !permitted) throw new ReadOnlyFileError(target, stat.mode);
}

export interface ReplaceOptions {
  /** Copy the current file to FILE.bak first (itself through a temp file and rename). */
  keepBackup?: boolean;
}

/** Writes `text` over `target` atomically, keeping its mode (0644 for a new file). */
export async function replaceFileAtomically(target: string, text: string, opts: ReplaceOptions = {}): Promise<void> {
  const dir = path.dirname(target);
  await fs.mkdir(dir, { recursive: true });
  await removeStaleTemps(dir, path.basename(target));
  const previous = await fs.stat(target).catch(() => null);
  const mode = previous ? previous.mode & 0o777 : 0o644;
  const temp = tempName(target);
  try {
    const handle = await fs.open(temp, 'wx', mode);
    try {
      await handle.writeFile(text, 'utf8');
      // The umask may have narrowed the mode given to open.
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (previous && opts.keepBackup) await keepBackup(target);
    await fs.rename(temp, target);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  await syncDir(dir);
}

function tempName(file: string): string {
  return `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** FILE.bak through its own temp file and rename: FILE itself is never moved away, so there is always one. */
async function keepBackup(target: string): Promise<void> {
  const backup = `${target}.bak`;
  const temp = tempName(backup);
  try {
    await fs.copyFile(target, temp);
    await fs.rename(temp, backup);
  } catch (error) {
    await fs.rm(temp, { force: true });
    if (errnoCode(error) !== 'ENOENT') throw error;
  }
}

/** Removes temp files left by a process that died mid-save (never those of a live one, which may still rename). */
async function removeStaleTemps(dir: string, base: string): Promise<void> {
  const pattern = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:\\.bak)?\\.tmp-(\\d+)-[0-9a-f]+$`);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const match = pattern.exec(name);
    if (match && Number(match[1]) !== process.pid && !isPidAlive(Number(match[1]))) {
      await fs.rm(path.join(dir, name), { force: true });
    }
  }
}

/** Makes the rename itself durable; directories cannot be opened for this on Windows, where it is skipped. */
async function syncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle | null = null;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Not supported on this platform or file system; the rename is still atomic.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
