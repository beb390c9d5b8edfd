/**
 * Ordered schema migrations, tracked in `PRAGMA user_version`. Each runs in its own transaction together with
 * the version bump, so a crash mid-migration leaves the previous version intact. To change the schema (the job
 * queue's tables, say), append { version: N + 1, … } here and never edit a released one.
 */
import type { Database } from 'better-sqlite3';
import { SCHEMA_V1 } from './schema-v1';
import { SCHEMA_V2 } from './schema-v2';
import { SCHEMA_V3 } from './schema-v3';
import { SCHEMA_V4 } from './schema-v4';
import { SCHEMA_V5 } from './schema-v5';
import { SCHEMA_V6 } from './schema-v6';
import { SCHEMA_V7 } from './schema-v7';
import { SCHEMA_V8 } from './schema-v8';
import { SCHEMA_V9 } from './schema-v9';
import { SCHEMA_V10 } from './schema-v10';
import { StateDbTooNewError } from './state-db-errors';

export interface Migration {
  version: number;
  description: string;
  up(db: Database): void;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: 'runs, generations, loss, run workers, output, events, worker registry, node names, counters', up: (db) => db.exec(SCHEMA_V1) },
  { version: 2, description: 'adapter jobs queue, job output, artifacts and their producers, measured VRAM peaks', up: (db) => db.exec(SCHEMA_V2) },
  { version: 3, description: 'node identity: pinned Ed25519 keys and new keys held back', up: (db) => db.exec(SCHEMA_V3) },
  { version: 4, description: "how each worker's part in a run ended", up: (db) => db.exec(SCHEMA_V4) },
  { version: 5, description: 'when each piece of run output was received', up: (db) => db.exec(SCHEMA_V5) },
  { version: 6, description: "the trainer's other numbers per run (lr, eval_loss…)", up: (db) => db.exec(SCHEMA_V6) },
  { version: 7, description: "each run's tags and note", up: (db) => db.exec(SCHEMA_V7) },
  { version: 8, description: 'the job and the node each event is about', up: (db) => db.exec(SCHEMA_V8) },
  { version: 9, description: 'when each piece of job output was received', up: (db) => db.exec(SCHEMA_V9) },
  { version: 10, description: "every machine's resource use a minute over the last 24 h", up: (db) => db.exec(SCHEMA_V10) },
];

export function latestVersion(migrations: readonly Migration[] = MIGRATIONS): number {
  return migrations.at(-1)?.version ?? 0;
}

export function schemaVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Throws StateDbTooNewError, naming `file`, when the database is from a newer schema than `migrations` reach. */
export function refuseNewer(db: Database, file: string, migrations: readonly Migration[] = MIGRATIONS): void {
  const version = schemaVersion(db);
  if (version > latestVersion(migrations)) throw new StateDbTooNewError(file, version, latestVersion(migrations));
}

/** Brings the database up to the last migration; returns the versions it went from and to. */
export function migrate(db: Database, file: string, migrations: readonly Migration[] = MIGRATIONS): { from: number; to: number } {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`state migrations must be numbered 1, 2, 3…: entry ${i} is version ${m.version}`);
  });
  refuseNewer(db, file, migrations);
  const from = schemaVersion(db);
  for (const migration of migrations.slice(from)) {
    db.transaction(() => {
      migration.up(db);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
  return { from, to: latestVersion(migrations) };
}
