/**
 * The VRAM ledger's memory: the highest VRAM measured for a job's process tree, per model and mode, so later
 * jobs of the same kind are placed on what they really use rather than on the declared guess. Acknowledged.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { BatchedWriter } from './batched-writer';

export class VramPeaksRepo {
  private readonly upsert: Statement<{ model: string; mode: string; peak: number; now: number }>;
  private readonly getStmt: Statement<[string, string], { peak_mb: number }>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
  ) {
    this.upsert = db.prepare(
      `INSERT INTO vram_peaks (model, mode, peak_mb, updated_at) VALUES (@model, @mode, @peak, @now)
       ON CONFLICT (model, mode) DO UPDATE SET peak_mb = excluded.peak_mb, updated_at = excluded.updated_at WHERE excluded.peak_mb > peak_mb`,
    );
    this.getStmt = db.prepare('SELECT peak_mb FROM vram_peaks WHERE model = ? AND mode = ?');
  }

  /** Records a measured peak (MB); a lower one than already known changes nothing. */
  record(model: string, mode: string, peakMb: number, now: number): void {
    if (!Number.isFinite(peakMb) || peakMb < 0) throw new Error(`a VRAM peak must be a finite, non-negative number of MB (got ${peakMb} for ${model}/${mode})`);
    this.writer.writeNow(() => this.upsert.run({ model, mode, peak: peakMb, now }));
  }

  /** The highest peak measured for this model and mode, MB; null when never measured. */
  get(model: string, mode: string): number | null {
    return this.writer.read(() => this.getStmt.get(model, mode))?.peak_mb ?? null;
  }
}
