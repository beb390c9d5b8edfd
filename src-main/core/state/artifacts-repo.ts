/**
 * The artifact index: one row per distinct output tarball (content-addressed by its sha256, so identical
 * outputs are stored once) and one per job attempt that produced it. The bytes themselves live in the
 * artifact store's folder; this is what says which job made them. Writes are acknowledged.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { ArtifactSnapshot } from '../../../src-shared/jobs/types';
import type { BatchedWriter } from './batched-writer';

interface ArtifactDbRow {
  sha256: string;
  size_bytes: number;
  created_at: number;
}

interface ProducerDbRow {
  sha256: string;
  job_id: string;
  job_name: string;
  attempt: number;
}

export class ArtifactsRepo {
  private readonly insertArtifact: Statement<{ sha256: string; size: number; now: number }>;
  private readonly insertProducer: Statement<{ sha256: string; jobId: string; attempt: number; now: number }>;
  private readonly getStmt: Statement<[string], ArtifactDbRow>;
  private readonly listStmt: Statement<[], ArtifactDbRow>;
  private readonly producersOf: Statement<[string], ProducerDbRow>;
  private readonly allProducers: Statement<[], ProducerDbRow>;
  private readonly deleteArtifact: Statement<[string]>;
  private readonly deleteProducersOfJob: Statement<[string, string]>;
  private readonly countProducers: Statement<[string], { n: number }>;
  private readonly totalStmt: Statement<[], { n: number; bytes: number | null }>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
  ) {
    this.insertArtifact = db.prepare('INSERT INTO artifacts (sha256, size_bytes, created_at) VALUES (@sha256, @size, @now) ON CONFLICT (sha256) DO NOTHING');
    this.insertProducer = db.prepare(
      'INSERT INTO artifact_producers (sha256, job_id, attempt, at) VALUES (@sha256, @jobId, @attempt, @now) ON CONFLICT DO NOTHING',
    );
    this.getStmt = db.prepare('SELECT sha256, size_bytes, created_at FROM artifacts WHERE sha256 = ?');
    this.listStmt = db.prepare('SELECT sha256, size_bytes, created_at FROM artifacts ORDER BY created_at DESC, sha256');
    // Jobs are never deleted; the fallback name only guards against an index written by hand.
    const producers = `SELECT p.sha256, p.job_id, coalesce(j.name, p.job_id) AS job_name, p.attempt
      FROM artifact_producers p LEFT JOIN jobs j ON j.id = p.job_id`;
    this.producersOf = db.prepare(`${producers} WHERE p.sha256 = ? ORDER BY p.at, p.job_id, p.attempt`);
    this.allProducers = db.prepare(`${producers} ORDER BY p.at, p.job_id, p.attempt`);
    this.deleteArtifact = db.prepare('DELETE FROM artifacts WHERE sha256 = ?'); // its producers go with it (ON DELETE CASCADE)
    this.deleteProducersOfJob = db.prepare('DELETE FROM artifact_producers WHERE sha256 = ? AND job_id = ?');
    this.countProducers = db.prepare('SELECT count(*) AS n FROM artifact_producers WHERE sha256 = ?');
    this.totalStmt = db.prepare('SELECT count(*) AS n, sum(size_bytes) AS bytes FROM artifacts');
  }

  /**
   * Records that attempt `attempt` of `jobId` produced the tarball `sha256` (acknowledged): 'new' the first time
   * these bytes are seen, 'existing' after. Throws, recording nothing, if the sha256 is known with another size.
   */
  record(sha256: string, sizeBytes: number, jobId: string, attempt: number, now: number): 'new' | 'existing' {
    return this.writer.writeNow(() => {
      const fresh = this.insertArtifact.run({ sha256, size: sizeBytes, now }).changes > 0;
      if (!fresh) {
        const known = this.getStmt.get(sha256)!.size_bytes;
        if (known !== sizeBytes) throw new Error(`artifact ${sha256} is recorded as ${known} bytes, not ${sizeBytes}: the store and the index disagree`);
      }
      this.insertProducer.run({ sha256, jobId, attempt, now });
      return fresh ? 'new' : 'existing';
    });
  }

  /**
   * Records a run's output tarball (acknowledged; the run and what made it are kept by the caller): indexed from
   * now on, so the store never removes it as an upload nobody claimed. Throws if known with another size.
   */
  recordRunOutput(sha256: string, sizeBytes: number, now: number): 'new' | 'existing' {
    return this.writer.writeNow(() => {
      if (this.insertArtifact.run({ sha256, size: sizeBytes, now }).changes > 0) return 'new';
      const known = this.getStmt.get(sha256)!.size_bytes;
      if (known !== sizeBytes) throw new Error(`artifact ${sha256} is recorded as ${known} bytes, not ${sizeBytes}: the store and the index disagree`);
      return 'existing';
    });
  }

  has(sha256: string): boolean {
    return this.writer.read(() => this.getStmt.get(sha256)) !== undefined;
  }

  /**
   * Takes `jobId`'s attempts out of the artifact's producers (acknowledged); returns how many producers are left.
   * The artifact's own row stays: removing it is the caller's decision (runs may still name it).
   */
  forgetJob(sha256: string, jobId: string): number {
    return this.writer.writeNow(() => {
      this.deleteProducersOfJob.run(sha256, jobId);
      return this.countProducers.get(sha256)!.n;
    });
  }

  /** Removes the artifact's row and every producer row (acknowledged); false when there was none. */
  remove(sha256: string): boolean {
    return this.writer.writeNow(() => this.deleteArtifact.run(sha256).changes > 0);
  }

  /** How many artifacts are indexed and their bytes together. */
  totals(): { count: number; totalBytes: number } {
    const row = this.writer.read(() => this.totalStmt.get()!);
    return { count: row.n, totalBytes: row.bytes ?? 0 };
  }

  /** Every artifact, newest first, each with the job attempts that produced it. */
  list(): ArtifactSnapshot[] {
    const [rows, producers] = this.writer.read(() => [this.listStmt.all(), this.allProducers.all()] as const);
    const bySha = new Map<string, ProducerDbRow[]>();
    for (const p of producers) bySha.set(p.sha256, [...(bySha.get(p.sha256) ?? []), p]);
    return rows.map((row) => snapshot(row, bySha.get(row.sha256) ?? []));
  }

  get(sha256: string): ArtifactSnapshot | null {
    return this.writer.read(() => {
      const row = this.getStmt.get(sha256);
      return row ? snapshot(row, this.producersOf.all(sha256)) : null;
    });
  }
}

function snapshot(row: ArtifactDbRow, producers: ProducerDbRow[]): ArtifactSnapshot {
  return {
    sha256: row.sha256,
    sizeBytes: row.size_bytes,
    createdAt: row.created_at,
    producedBy: producers.map((p) => ({ jobId: p.job_id, jobName: p.job_name, attempt: p.attempt })),
  };
}
