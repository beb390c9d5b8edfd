/**
 * The warm launcher's private folder (its FIFO and the launch requests) in the temp dir, and the sweep of the
 * folders that agents killed with SIGKILL left behind: a killed agent cannot remove its folder, so every
 * agent that makes one first removes the folders whose owning agent is gone. Each folder names its owner in
 * `owner.pid`; only this user's plain folders are touched, and a folder whose owner still runs (or cannot be
 * told apart from a running one) is left alone. Folders from before the owner file are removed once an hour old.
 */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const WARM_DIR_PREFIX = 'gpu-share-warm-';
const OWNER_FILE = 'owner.pid';
/** Folders looked at per sweep: a temp dir full of them costs an agent's start a bounded time. */
export const MAX_SWEPT = 256;
/** A folder without an owner file (made before it existed) this old is a leftover. */
const OWNERLESS_AGE_MS = 60 * 60 * 1000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'; // EPERM: alive, someone else's
  }
}

function ownerOf(dir: string): number | null {
  const file = path.join(dir, OWNER_FILE);
  try {
    const st = lstatSync(file);
    if (!st.isFile() || st.size > 32) return null;
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Removes the warm folders in `tmp` whose owner is gone; returns their paths. Never throws. */
export function sweepStaleWarmDirs(tmp = os.tmpdir(), isAlive: (pid: number) => boolean = alive, now = Date.now()): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(tmp).filter((n) => n.startsWith(WARM_DIR_PREFIX)).slice(0, MAX_SWEPT);
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const dir = path.join(tmp, name);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      const owner = ownerOf(dir);
      const gone = owner === null ? now - st.mtimeMs > OWNERLESS_AGE_MS : owner !== process.pid && !isAlive(owner);
      if (!gone) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // Raced with its owner or another sweep: leave it.
    }
  }
  return removed;
}

/** A new private warm folder owned by this process, after sweeping the leftovers. */
export function makeWarmDir(tmp = os.tmpdir()): string {
  sweepStaleWarmDirs(tmp);
  const dir = mkdtempSync(path.join(tmp, WARM_DIR_PREFIX));
  writeFileSync(path.join(dir, OWNER_FILE), `${process.pid}\n`, { mode: 0o600 });
  return dir;
}
