/**
 * Coordinators on a real state database in a temporary folder, each restored from what the one before it on that
 * folder kept — a restart as the app does it (restoreCoordinator), for tests of what survives one. The one before
 * keeps its handle open unless the test stops it: it "died" (SIGKILL: nothing closed or flushed). Folders and
 * handles go after each test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { restoreCoordinator } from '../../../src-main/core/coordinator-persistence';
import { openStateDb, type StateDb } from '../../../src-main/core/state';
import { Harness } from './harness';

export interface Restartable {
  /** A new empty data folder. */
  dataDir(): string;
  /** A coordinator restored from (and writing to) the database in `dir`, and that database. */
  coordinatorOn(dir: string): { h: Harness; db: StateDb };
}

/** Call at a test file's top level: registers the clean-up. */
export function restartable(prefix = 'gs-restart-'): Restartable {
  const dirs: string[] = [];
  const dbs: StateDb[] = [];
  afterEach(() => {
    for (const db of dbs.splice(0)) db.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    dataDir() {
      const d = mkdtempSync(path.join(os.tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    coordinatorOn(dir) {
      const db = openStateDb(dir, { batch: { flushMs: 60_000 } });
      dbs.push(db);
      return { h: new Harness({ before: (svc) => restoreCoordinator(db, svc, () => 1_700_000_000_000) }), db };
    },
  };
}
