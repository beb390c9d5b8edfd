/**
 * A run's generations: every shard map it had (the shard history, capped per run, oldest dropped) and where each
 * generation began on the loss curve (its mark). All writes are acknowledged: they say who trains which samples.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { GenerationMark, ShardMap, ShardRange } from '../../../src-shared/training';
import type { BatchedWriter } from './batched-writer';

export const DEFAULT_MAX_SHARD_MAPS = 200;

interface ShardMapRow {
  generation: number;
  total_samples: number;
  shards: string;
  at: number;
  cause: string;
}

export class GenerationsRepo {
  private readonly insertMap: Statement<[string, number, number, string, number, string]>;
  private readonly trimMaps: Statement<[string, string, number]>;
  private readonly listMaps: Statement<[string], ShardMapRow>;
  private readonly upsertMark: Statement<[string, number, number, number, string]>;
  private readonly listMarks: Statement<[string], GenerationMark>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
    private readonly maxShardMaps = DEFAULT_MAX_SHARD_MAPS,
  ) {
    this.insertMap = db.prepare('INSERT INTO shard_maps (run_id, generation, total_samples, shards, at, cause) VALUES (?, ?, ?, ?, ?, ?)');
    this.trimMaps = db.prepare('DELETE FROM shard_maps WHERE run_id = ? AND id NOT IN (SELECT id FROM shard_maps WHERE run_id = ? ORDER BY id DESC LIMIT ?)');
    this.listMaps = db.prepare('SELECT generation, total_samples, shards, at, cause FROM shard_maps WHERE run_id = ? ORDER BY id');
    this.upsertMark = db.prepare(
      'INSERT INTO generation_marks (run_id, generation, step, at, cause) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (run_id, generation) DO UPDATE SET step = excluded.step, at = excluded.at, cause = excluded.cause',
    );
    this.listMarks = db.prepare('SELECT generation, step, at, cause FROM generation_marks WHERE run_id = ? ORDER BY generation');
  }

  /** Appends a shard map to the run's history (acknowledged); the run must be saved first. */
  recordShardMap(runId: string, map: ShardMap): void {
    this.writer.writeNow(() => this.insertMapRow(runId, map));
  }

  /** Sets where a generation began on the curve (acknowledged; a second mark for the same generation replaces it). */
  markGeneration(runId: string, mark: GenerationMark): void {
    this.writer.writeNow(() => this.upsertMark.run(runId, mark.generation, mark.step, mark.at, mark.cause));
  }

  /** A new generation's shard map and its mark, in one transaction. */
  startGeneration(runId: string, map: ShardMap, mark: GenerationMark): void {
    this.writer.writeNow(() => {
      this.insertMapRow(runId, map);
      this.upsertMark.run(runId, mark.generation, mark.step, mark.at, mark.cause);
    });
  }

  /** The run's shard maps, oldest first. */
  shardHistory(runId: string): ShardMap[] {
    return this.writer
      .read(() => this.listMaps.all(runId))
      .map((row) => ({ generation: row.generation, totalSamples: row.total_samples, shards: JSON.parse(row.shards) as ShardRange[], at: row.at, cause: row.cause }));
  }

  /** The run's generation marks, by generation. */
  marks(runId: string): GenerationMark[] {
    return this.writer.read(() => this.listMarks.all(runId)).map((m) => ({ ...m }));
  }

  private insertMapRow(runId: string, map: ShardMap): void {
    this.insertMap.run(runId, map.generation, map.totalSamples, JSON.stringify(map.shards), map.at, map.cause);
    this.trimMaps.run(runId, runId, this.maxShardMaps);
  }
}
