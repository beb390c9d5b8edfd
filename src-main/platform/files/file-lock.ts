/**
 * A cross-process lock for read-modify-write of one file: `FILE.lock`, created with O_EXCL (exactly one
 * creator wins, on every local file system) and holding the owner's pid, host and start time. A lock whose
 * owner is gone (a writer killed mid-save) is broken: on this host when its pid no longer runs, from another
 * host (a shared folder) when it is older than any save takes.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import { errnoCode, isPidAlive } from './errno';

export interface FileLockOptions {
  /** Give up waiting after this long; the error says who holds the lock. Default 10 s. */
  timeoutMs?: number;
  /** A lock this old is broken even when its owner cannot be checked (other host, unreadable). Default 30 s. */
  staleMs?: number;
}

interface LockOwner {
  pid: number;
  host: string;
  at: number;
  nonce: string;
}

/** Raised when the lock stayed taken for the whole timeout. */
export class FileLockTimeout extends Error {
  constructor(
    readonly lockPath: string,
    owner: LockOwner | null,
  ) {
    const who = owner ? `process ${owner.pid} on ${owner.host}` : 'another process';
    super(
      `${lockPath} is held by ${who}, which is changing the same file; try again in a moment (if no GPU Share or gpu-share command is running, delete ${lockPath})`,
    );
    this.name = 'FileLockTimeout';
  }
}


async function readOwner(lockPath: string): Promise<{ owner: LockOwner | null; mtimeMs: number } | null> {
  try {
    const [text, stat] = await Promise.all([fs.readFile(lockPath, 'utf8'), fs.stat(lockPath)]);
    let owner: LockOwner | null = null;
    try {
      const parsed = JSON.parse(text) as Partial<LockOwner>;
      if (typeof parsed.pid === 'number' && typeof parsed.host === 'string') owner = parsed as LockOwner;
    } catch {
      // Empty or torn: its creator died between creating and writing it, or is writing it right now.
    }
    return { owner, mtimeMs: stat.mtimeMs };
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw error;
  }
}

function isStale(found: { owner: LockOwner | null; mtimeMs: number }, staleMs: number): boolean {
  const age = Date.now() - found.mtimeMs;
  if (!found.owner) return age > 2000;
  if (found.owner.host === os.hostname()) return !isPidAlive(found.owner.pid) || age > staleMs * 10;
  return age > staleMs;
}

/**
 * Removes a stale lock only if it is still the one judged stale: it is renamed aside first (atomic), and put
 * back if what was moved turns out to be a newer owner's lock.
 */
async function breakStaleLock(lockPath: string, judged: { owner: LockOwner | null; mtimeMs: number }): Promise<void> {
  const aside = `${lockPath}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await fs.rename(lockPath, aside);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return;
    throw error;
  }
  const moved = await readOwner(aside);
  const same = moved !== null && moved.mtimeMs === judged.mtimeMs && moved.owner?.nonce === judged.owner?.nonce;
  if (!same && moved?.owner) {
    // A live owner's lock was moved by mistake: link it back unless someone has taken the name meanwhile.
    await fs.link(aside, lockPath).catch(() => undefined);
  }
  await fs.rm(aside, { force: true });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `fn` while holding `${target}.lock`; the lock is released however `fn` ends. */
export async function withFileLock<T>(target: string, fn: () => Promise<T>, opts: FileLockOptions = {}): Promise<T> {
  const lockPath = `${target}.lock`;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const staleMs = opts.staleMs ?? 30_000;
  const me: LockOwner = { pid: process.pid, host: os.hostname(), at: Date.now(), nonce: randomBytes(8).toString('hex') };
  const started = Date.now();
  let wait = 5;
  for (;;) {
    try {
      const handle = await fs.open(lockPath, 'wx', 0o644);
      try {
        await handle.writeFile(JSON.stringify(me));
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
    }
    const found = await readOwner(lockPath);
    if (found && isStale(found, staleMs)) {
      await breakStaleLock(lockPath, found);
      continue;
    }
    if (Date.now() - started > timeoutMs) throw new FileLockTimeout(lockPath, found?.owner ?? null);
    await sleep(wait + Math.random() * wait);
    wait = Math.min(wait * 2, 100);
  }
  try {
    return await fn();
  } finally {
    // Only our own lock is removed: if it was broken as stale meanwhile, the file is someone else's now.
    const current = await readOwner(lockPath).catch(() => null);
    if (current?.owner?.nonce === me.nonce) await fs.rm(lockPath, { force: true });
  }
}
