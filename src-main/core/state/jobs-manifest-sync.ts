/**
 * A manifest into the jobs table in steps that each take milliseconds, while the table changes in one
 * transaction: the jobs are first written to a temporary stage table a chunk at a time (the caller may let the
 * event loop turn between chunks), then one SQL-only transaction inserts the new ones in manifest order,
 * updates the kept ones and marks the unlisted ones. 10,000 jobs inserted row by row from JavaScript in one
 * transaction held the coordinator's event loop for 100–250 ms; the stage's final statements run inside SQLite.
 * Nothing in the jobs table changes until that last transaction, so a crash mid-way leaves the queue as it was.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { JobSpec } from '../../../src-shared/jobs/types';
import type { BatchedWriter } from './batched-writer';

/** Jobs written to the stage per step. */
export const STAGE_CHUNK = 1000;

export interface ManifestSyncResult {
  added: string[];
  kept: string[];
  missing: string[];
}

type Listed = { id: string; spec: JobSpec }[];
const NOT_IN_JOBS = 'NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = s.id)';
const NOT_STAGED = 'NOT EXISTS (SELECT 1 FROM temp.manifest_stage s WHERE s.id = jobs.id)';

export class ManifestSync {
  private readonly clearStmt: Statement<[]>;
  private readonly stageStmt: Statement<{ ord: number; id: string; name: string; spec: string; maxAttempts: number }>;
  private readonly addedStmt: Statement<[], { id: string }>;
  private readonly keptStmt: Statement<[], { id: string }>;
  private readonly updateStmt: Statement<{ now: number }>;
  private readonly insertStmt: Statement<{ now: number }>;
  private readonly missingStmt: Statement<[], { id: string }>;
  private readonly unlistStmt: Statement<{ now: number }>;
  private busy = false;

  constructor(
    private readonly db: Database,
    private readonly writer: BatchedWriter,
  ) {
    db.exec('CREATE TEMP TABLE IF NOT EXISTS manifest_stage (ord INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, name TEXT NOT NULL, spec TEXT NOT NULL, max_attempts INTEGER NOT NULL)');
    this.clearStmt = db.prepare('DELETE FROM temp.manifest_stage');
    this.stageStmt = db.prepare('INSERT INTO temp.manifest_stage (ord, id, name, spec, max_attempts) VALUES (@ord, @id, @name, @spec, @maxAttempts)');
    this.addedStmt = db.prepare(`SELECT id FROM temp.manifest_stage s WHERE ${NOT_IN_JOBS} ORDER BY ord`);
    this.keptStmt = db.prepare(`SELECT id FROM temp.manifest_stage s WHERE NOT ${NOT_IN_JOBS} ORDER BY ord`);
    this.updateStmt = db.prepare(
      `UPDATE jobs SET name = s.name, spec = s.spec, max_attempts = s.max_attempts, in_manifest = 1, updated_at = @now
       FROM temp.manifest_stage s
       WHERE jobs.id = s.id AND (jobs.name <> s.name OR jobs.spec <> s.spec OR jobs.max_attempts <> s.max_attempts OR jobs.in_manifest = 0)`,
    );
    this.insertStmt = db.prepare(
      `INSERT INTO jobs (id, name, spec, status, attempts, max_attempts, held_vram_mb, over_budget, in_manifest, created_at, updated_at)
       SELECT id, name, spec, 'pending', 0, max_attempts, 0, 0, 1, @now, @now FROM temp.manifest_stage s WHERE ${NOT_IN_JOBS} ORDER BY ord`,
    );
    this.missingStmt = db.prepare(`SELECT id FROM jobs WHERE ${NOT_STAGED} AND status NOT IN ('completed', 'failed', 'cancelled') ORDER BY seq`);
    this.unlistStmt = db.prepare(`UPDATE jobs SET in_manifest = 0, updated_at = @now WHERE in_manifest = 1 AND ${NOT_STAGED}`);
  }

  /** The whole sync in one transaction (tests, small manifests). */
  sync(listed: Listed, now: number): ManifestSyncResult {
    this.claim();
    try {
      return this.writer.writeNow(() => {
        this.clearStmt.run();
        this.stage(listed, 0, listed.length);
        return this.apply(now, this.split());
      });
    } finally {
      this.busy = false;
    }
  }

  /** The same, staged STAGE_CHUNK jobs per step with `between()` awaited between steps. */
  async syncInSteps(listed: Listed, now: () => number, between: () => Promise<void>): Promise<ManifestSyncResult> {
    this.claim();
    try {
      this.writer.writeNow(() => this.clearStmt.run());
      for (let from = 0; from < listed.length; from += STAGE_CHUNK) {
        await between();
        this.writer.writeNow(() => this.stage(listed, from, Math.min(listed.length, from + STAGE_CHUNK)));
      }
      await between();
      // Which listed jobs are new: jobs are never deleted and only this (busy-guarded) sync inserts them, so the
      // answer read here still holds in the last step, which then does only the writes.
      const split = this.writer.read(() => this.split());
      await between();
      // 10,000 jobs are about 1,100 pages of WAL: more than the 1,000 at which SQLite copies the WAL back into the
      // database file at commit. That copy is made in a step of its own instead of inside the last one.
      const result = this.withoutAutoCheckpoint(() => this.writer.writeNow(() => this.apply(now(), split)));
      await between();
      this.db.pragma('wal_checkpoint(PASSIVE)');
      return result;
    } finally {
      this.busy = false;
    }
  }

  /** Runs `fn` (synchronous: nothing else runs meanwhile) with SQLite's automatic checkpoint off, then restores it. */
  private withoutAutoCheckpoint<T>(fn: () => T): T {
    const pages = this.db.pragma('wal_autocheckpoint', { simple: true }) as number;
    this.db.pragma('wal_autocheckpoint = 0');
    try {
      return fn();
    } finally {
      this.db.pragma(`wal_autocheckpoint = ${Math.floor(pages)}`);
    }
  }

  private claim(): void {
    if (this.busy) throw new Error('a manifest is being loaded already; submit again once it is done');
    this.busy = true;
  }

  private stage(listed: Listed, from: number, to: number): void {
    for (let ord = from; ord < to; ord++) {
      const { id, spec } = listed[ord]!;
      this.stageStmt.run({ ord, id, name: spec.name, spec: JSON.stringify(spec), maxAttempts: spec.maxAttempts });
    }
  }

  /** The staged jobs that are new to the queue and those it has already, each in manifest order. */
  private split(): { added: string[]; kept: string[] } {
    return { added: this.addedStmt.all().map((r) => r.id), kept: this.keptStmt.all().map((r) => r.id) };
  }

  /** Runs inside one transaction: the staged list becomes the manifest. */
  private apply(now: number, { added, kept }: { added: string[]; kept: string[] }): ManifestSyncResult {
    const missing = this.missingStmt.all().map((r) => r.id);
    this.updateStmt.run({ now });
    this.insertStmt.run({ now });
    this.unlistStmt.run({ now });
    this.clearStmt.run();
    return { added, kept, missing };
  }
}
