// Opening state.db: pragmas and permissions, migrations, a newer schema refused untouched, a corrupt file moved
// aside, and anything but a regular file refused at once.
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { latestVersion, MIGRATIONS, openStateDb, STATE_DB_FILE, StateDbPathError, StateDbTooNewError, type Migration } from '../../../src-main/core/state/index';
import { SymlinkRefusedError } from '../../../src-main/platform/files/refuse-symlink';
import { closeTemp, openTemp, tempDataDir } from './temp-state';

const posix = process.platform !== 'win32';

function tables(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
}

describe('openStateDb', () => {
  it('creates state.db owner-only in WAL mode with foreign keys, a busy timeout and the latest schema', () => {
    const dir = path.join(tempDataDir(), 'not-yet');
    const db = openTemp(dir);
    expect(db.file).toBe(path.join(dir, STATE_DB_FILE));
    expect(db.warnings).toEqual([]);
    expect(db.database.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.database.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.database.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(db.database.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(db.database.pragma('user_version', { simple: true })).toBe(latestVersion());
    db.kv.set('x', 1); // makes the -wal file
    if (posix) {
      expect(statSync(db.file).mode & 0o777).toBe(0o600);
      expect(statSync(`${db.file}-wal`).mode & 0o777).toBe(0o600);
    }
    closeTemp(db);
    expect(tables(path.join(dir, STATE_DB_FILE))).toEqual(
      expect.arrayContaining(['events', 'generation_marks', 'kv', 'loss_points', 'node_names', 'run_output', 'run_workers', 'runs', 'shard_maps', 'workers']),
    );
  });

  it("picks FULL for 'power-loss' durability", () => {
    const db = openTemp(tempDataDir(), { durability: 'power-loss' });
    expect(db.database.pragma('synchronous', { simple: true })).toBe(2);
  });

  it.runIf(posix)('tightens a file an older build left readable by others', () => {
    const dir = tempDataDir();
    writeFileSync(path.join(dir, STATE_DB_FILE), '', { mode: 0o644 });
    const db = openTemp(dir);
    expect(statSync(db.file).mode & 0o777).toBe(0o600);
  });

  it('migrates an empty file and keeps data across reopenings', () => {
    const dir = tempDataDir();
    writeFileSync(path.join(dir, STATE_DB_FILE), '');
    const first = openTemp(dir);
    first.kv.set('setting', { a: 1 });
    closeTemp(first);
    const again = openTemp(dir);
    expect(again.kv.get('setting')).toEqual({ a: 1 });
    expect(again.warnings).toEqual([]);
  });

  it('applies a later migration on top of an existing database (as migration 2 added the job queue)', () => {
    const dir = tempDataDir();
    closeTemp(openTemp(dir));
    const later: Migration = { version: latestVersion() + 1, description: 'a later table', up: (db) => db.exec('CREATE TABLE later_things (id INTEGER PRIMARY KEY, spec TEXT NOT NULL) STRICT') };
    const db = openTemp(dir, { migrations: [...MIGRATIONS, later] });
    expect(db.database.pragma('user_version', { simple: true })).toBe(latestVersion() + 1);
    db.database.prepare('INSERT INTO later_things (spec) VALUES (?)').run('{}');
    closeTemp(db);
    // The older build then refuses that file rather than guessing at it.
    expect(() => openStateDb(dir)).toThrow(StateDbTooNewError);
  });

  it('refuses a database from a newer schema, naming the file, and leaves it byte for byte', () => {
    const dir = tempDataDir();
    const file = path.join(dir, STATE_DB_FILE);
    const raw = new Database(file);
    raw.exec('CREATE TABLE future (x)');
    raw.pragma(`user_version = ${latestVersion() + 5}`);
    raw.close();
    const before = readFileSync(file);
    let thrown: unknown;
    try {
      openStateDb(dir);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StateDbTooNewError);
    expect((thrown as Error).message).toContain(file);
    expect((thrown as Error).message).toContain(`state schema ${latestVersion() + 5}`);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual([STATE_DB_FILE]);
  });

  it('moves a corrupt file aside with a warning and starts fresh', () => {
    const dir = tempDataDir();
    const file = path.join(dir, STATE_DB_FILE);
    const garbage = Buffer.alloc(8192, 0x5a);
    writeFileSync(file, garbage);
    writeFileSync(`${file}-wal`, 'stale wal');
    const told: string[] = [];
    const db = openTemp(dir, { onWarning: (m) => told.push(m), now: () => Date.UTC(2025, 2, 1, 9, 30) });
    const aside = `${file}.corrupt-2025-03-01T09-30-00-000Z`;
    expect(db.warnings).toHaveLength(1);
    expect(told).toEqual(db.warnings);
    expect(db.warnings[0]).toContain(file);
    expect(db.warnings[0]).toContain(aside);
    expect(readFileSync(aside).equals(garbage)).toBe(true);
    // The stale -wal must not be replayed onto the fresh file (SQLite may have removed it while trying the garbage).
    expect(readdirSync(dir).filter((f) => f.endsWith('-wal')).map((f) => readFileSync(path.join(dir, f), 'utf8'))).not.toContain('stale wal');
    expect(db.runs.list()).toEqual([]);
    db.kv.set('fresh', true);
    expect(db.kv.get('fresh')).toBe(true);
  });

  it('moves aside a database whose pages are damaged (the header is fine, quick_check is not)', () => {
    const dir = tempDataDir();
    const first = openTemp(dir);
    first.kv.set('big', 'x'.repeat(20_000));
    first.database.pragma('wal_checkpoint(TRUNCATE)');
    closeTemp(first);
    const file = path.join(dir, STATE_DB_FILE);
    const bytes = readFileSync(file);
    bytes.fill(0xff, 4096, bytes.length); // every page after the first
    writeFileSync(file, bytes);
    const db = openTemp(dir);
    expect(db.warnings).toHaveLength(1);
    expect(db.kv.get('big')).toBeUndefined();
    expect(readdirSync(dir).some((f) => f.startsWith(`${STATE_DB_FILE}.corrupt-`))).toBe(true);
  });

  it('refuses a directory at the path with a clear error', () => {
    const dir = tempDataDir();
    mkdirSync(path.join(dir, STATE_DB_FILE));
    expect(() => openStateDb(dir)).toThrow(StateDbPathError);
    expect(() => openStateDb(dir)).toThrow(/state\.db is a directory, not a regular file/);
  });

  it.runIf(posix)('refuses a FIFO at the path at once instead of blocking on it', () => {
    const dir = tempDataDir();
    const file = path.join(dir, STATE_DB_FILE);
    execFileSync('mkfifo', [file]);
    const started = performance.now();
    expect(() => openStateDb(dir)).toThrow(/is a FIFO \(named pipe\), not a regular file/);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(statSync(file).isFIFO()).toBe(true);
  });

  it.runIf(posix)('refuses state.db as a symlink, naming it, and leaves the link, its target\'s mode and its bytes untouched', () => {
    const dir = tempDataDir();
    const outside = tempDataDir();
    const target = path.join(outside, 'someone-elses.db');
    // A real database elsewhere, readable by others: following the link would chmod it to 0600 and (as a
    // "corrupt" file) rename it aside.
    const seed = new Database(target);
    seed.exec('CREATE TABLE t (x); INSERT INTO t VALUES (42);');
    seed.close();
    chmodSync(target, 0o644);
    const before = readFileSync(target);
    const file = path.join(dir, STATE_DB_FILE);
    symlinkSync(target, file);
    expect(() => openStateDb(dir)).toThrow(SymlinkRefusedError);
    expect(() => openStateDb(dir)).toThrow(`${file} (the state database) is a symbolic link to ${target}`);
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
    expect(readlinkSync(file)).toBe(target);
    expect(statSync(target).mode & 0o777).toBe(0o644);
    expect(readFileSync(target).equals(before)).toBe(true);
    expect(readdirSync(dir)).toEqual([STATE_DB_FILE]);
    expect(readdirSync(outside)).toEqual(['someone-elses.db']);
  });

  it.runIf(posix)('refuses a symlink at state.db even when it points at garbage that would be "moved aside"', () => {
    const dir = tempDataDir();
    const target = path.join(tempDataDir(), 'notes.txt');
    writeFileSync(target, 'not a database at all, but mine');
    chmodSync(target, 0o664);
    symlinkSync(target, path.join(dir, STATE_DB_FILE));
    expect(() => openStateDb(dir)).toThrow(/is a symbolic link to .*notes\.txt: GPU Share does not follow links/);
    expect(readFileSync(target, 'utf8')).toBe('not a database at all, but mine');
    expect(statSync(target).mode & 0o777).toBe(0o664);
    expect(readdirSync(dir)).toEqual([STATE_DB_FILE]);
  });

  it.runIf(posix)('refuses a symlinked -wal companion (SQLite would write the log through it)', () => {
    const dir = tempDataDir();
    const target = path.join(tempDataDir(), 'victim');
    writeFileSync(target, 'precious');
    symlinkSync(target, path.join(dir, `${STATE_DB_FILE}-wal`));
    expect(() => openStateDb(dir)).toThrow(/state\.db-wal \(the state database's wal file\) is a symbolic link/);
    expect(readFileSync(target, 'utf8')).toBe('precious');
  });
});
