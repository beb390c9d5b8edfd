/** Temporary data folders for the state tests, removed after each test; databases opened here are closed first. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { openStateDb, type OpenStateDbOptions, type StateDb } from '../../../src-main/core/state/index';

const dirs: string[] = [];
const open: StateDb[] = [];

afterEach(() => {
  while (open.length) open.pop()!.close();
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

export function tempDataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-state-'));
  dirs.push(dir);
  return dir;
}

/** Opens state.db in `dir` (a fresh folder by default), closed after the test; warnings go to a list, not the console. */
export function openTemp(dir = tempDataDir(), opts: OpenStateDbOptions = {}): StateDb {
  const db = openStateDb(dir, { onWarning: () => undefined, ...opts });
  open.push(db);
  return db;
}

/** Closes a database opened with openTemp before the test ends (to reopen the file). */
export function closeTemp(db: StateDb): void {
  db.close();
  open.splice(open.indexOf(db), 1);
}
