/**
 * Opens <data dir>/state.db, the coordinator's restart-proof state: checks what sits at the path, keeps it
 * owner-only, moves a corrupt file aside (so the app still comes up), refuses one from a newer schema, and
 * migrates it to the current one.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import type { BatchOptions } from './batched-writer';
import { migrate, MIGRATIONS, refuseNewer, type Migration } from './migrations';
import { sqliteBindingForThisProcess } from './native-binding';
import { StateDb, type StateLimits } from './state-db';
import { StateDbTooNewError } from './state-db-errors';
import { checkStatePath, ensureOwnerOnlyFile, moveAside } from './state-db-file';

export const STATE_DB_FILE = 'state.db';

export interface OpenStateDbOptions {
  fileName?: string;
  /**
   * 'process-crash' (default) is synchronous=NORMAL. In WAL mode every commit is written to the -wal file before
   * it returns, and what a process has written survives its SIGKILL (the kernel holds it), so NORMAL keeps the
   * promise "a killed app loses nothing acknowledged" (test/integration/state-crash.test.ts checks it). What it
   * skips is the fsync per commit: a power cut or kernel crash can lose the last commits, never corrupt the file.
   * 'power-loss' is synchronous=FULL: that fsync too, costing milliseconds per acknowledged write on a laptop
   * disk (bench/state-db.ts) while better-sqlite3 blocks the event loop, so heartbeats wait behind a join storm.
   */
  durability?: 'process-crash' | 'power-loss';
  /** How long a write waits for another connection's lock (default 5 s). */
  busyTimeoutMs?: number;
  batch?: BatchOptions;
  limits?: StateLimits;
  /** Told each warning as well as StateDb.warnings holding it (default: console.warn). */
  onWarning?: (message: string) => void;
  now?: () => number;
  /** The schema to reach (tests; default MIGRATIONS). */
  migrations?: readonly Migration[];
}

class CorruptStateError extends Error {}

/** SQLite's words for a file that is not (or no longer) a database it can read. */
function isCorruption(error: unknown): boolean {
  if (error instanceof CorruptStateError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}

function connect(file: string, opts: OpenStateDbOptions): Database.Database {
  const migrations = opts.migrations ?? MIGRATIONS;
  // Electron from a checkout loads its own build of the module; plain Node and a packaged app, node_modules' one.
  const nativeBinding = sqliteBindingForThisProcess();
  const db = new Database(file, { timeout: opts.busyTimeoutMs ?? 5000, ...(nativeBinding ? { nativeBinding } : {}) });
  try {
    // Before anything writes to the file: a newer schema is left exactly as it is.
    refuseNewer(db, file, migrations);
    const check = db.pragma('quick_check', { simple: true }) as string;
    if (check !== 'ok') throw new CorruptStateError(`integrity check failed: ${check}`);
    const mode = db.pragma('journal_mode = WAL', { simple: true }) as string;
    if (mode !== 'wal') throw new Error(`${file}: SQLite would not use WAL mode here (got "${mode}"); is the folder on a network file system?`);
    db.pragma(`synchronous = ${opts.durability === 'power-loss' ? 'FULL' : 'NORMAL'}`);
    db.pragma('foreign_keys = ON');
    migrate(db, file, migrations);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Opens (creating or migrating) the state database in `dataDir`. Throws StateDbPathError / StateDbTooNewError,
 * and SymlinkRefusedError when state.db (or its -wal/-shm) is a symbolic link, which is then left untouched.
 */
export function openStateDb(dataDir: string, opts: OpenStateDbOptions = {}): StateDb {
  const file = path.join(dataDir, opts.fileName ?? STATE_DB_FILE);
  const now = opts.now ?? Date.now;
  const warnings: string[] = [];
  checkStatePath(file);
  ensureOwnerOnlyFile(file, dataDir);
  let db: Database.Database;
  try {
    db = connect(file, opts);
  } catch (error) {
    if (error instanceof StateDbTooNewError || !isCorruption(error)) throw error;
    const aside = moveAside(file, now());
    const reason = error instanceof Error ? error.message : String(error);
    const warning = `${file} could not be read as a database (${reason}); it was moved to ${aside} and GPU Share started with empty state (no earlier runs, events or workers).`;
    warnings.push(warning);
    (opts.onWarning ?? ((m: string) => console.warn(`warning: ${m}`)))(warning);
    ensureOwnerOnlyFile(file, dataDir);
    db = connect(file, opts);
  }
  return new StateDb(db, file, warnings, { ...(opts.batch ? { batch: opts.batch } : {}), ...(opts.limits ? { limits: opts.limits } : {}) });
}

