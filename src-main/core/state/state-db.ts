/**
 * The open state database: one repository per concept, sharing one connection and one BatchedWriter.
 *
 * Acknowledged (committed before the call returns; a SIGKILL right after cannot lose it):
 *   runs.save/delete/prune, generations.*, runWorkers.save/setMembers, events.append, workers.save/setState/remove,
 *   nodeNames.bind/forget, nodeKeys.save, kv.*, jobs.* (all but appendOutput), artifacts.record, vramPeaks.record.
 * Batched (written within `batch.flushMs`, before the next acknowledged write or read, and on close; a SIGKILL
 * loses at most the last flushMs of them):
 *   output.append, workers.touch (heartbeat times), runs.setProgress, runWorkers.setProgress, lossPoints.add, metricPoints.replaceFrom,
 *   jobs.appendOutput, clusterHistory.save/forget/prune.
 */
import type { Database } from 'better-sqlite3';
import type { RunSnapshot } from '../../../src-shared/training';
import { BatchedWriter, type BatchOptions } from './batched-writer';
import { ArtifactsRepo } from './artifacts-repo';
import { ClusterHistoryRepo } from './cluster-history-repo';
import { EventsRepo } from './events-repo';
import { GenerationsRepo } from './generations-repo';
import { JobsRepo } from './jobs-repo';
import { KvRepo } from './kv-repo';
import { LossPointsRepo } from './loss-points-repo';
import { MetricPointsRepo } from './metric-points-repo';
import { NodeKeysRepo } from './node-keys-repo';
import { NodeNamesRepo } from './node-names-repo';
import { OutputTailRepo } from './output-tail-repo';
import { loadRunSnapshot, loadRunSnapshots } from './run-snapshots';
import { RunWorkersRepo } from './run-workers-repo';
import { RunsRepo } from './runs-repo';
import { VramPeaksRepo } from './vram-peaks-repo';
import { WorkerRegistryRepo } from './worker-registry-repo';

export interface StateLimits {
  /** Events kept (default 10,000). */
  maxEvents?: number;
  /** Output bytes kept per run (default 1 MiB). */
  maxOutputBytes?: number;
  /** Loss points kept per run (default 4,000). */
  maxLossPoints?: number;
  /** Shard maps kept per run (default 200). */
  maxShardMaps?: number;
}

export class StateDb {
  readonly writer: BatchedWriter;
  readonly runs: RunsRepo;
  readonly generations: GenerationsRepo;
  readonly lossPoints: LossPointsRepo;
  readonly metricPoints: MetricPointsRepo;
  readonly runWorkers: RunWorkersRepo;
  readonly output: OutputTailRepo;
  readonly events: EventsRepo;
  readonly workers: WorkerRegistryRepo;
  readonly nodeNames: NodeNamesRepo;
  readonly nodeKeys: NodeKeysRepo;
  readonly kv: KvRepo;
  readonly jobs: JobsRepo;
  readonly artifacts: ArtifactsRepo;
  readonly vramPeaks: VramPeaksRepo;
  readonly clusterHistory: ClusterHistoryRepo;
  private closed = false;

  constructor(
    /** The connection, for repositories that later migrations add. */
    readonly database: Database,
    /** Path of the database file. */
    readonly file: string,
    /** What happened while opening that a person should hear about (a corrupt file moved aside). */
    readonly warnings: readonly string[],
    opts: { batch?: BatchOptions; limits?: StateLimits } = {},
  ) {
    const limits = opts.limits ?? {};
    this.writer = new BatchedWriter(database, opts.batch);
    this.runs = new RunsRepo(database, this.writer);
    this.generations = new GenerationsRepo(database, this.writer, limits.maxShardMaps);
    this.lossPoints = new LossPointsRepo(database, this.writer, limits.maxLossPoints);
    this.metricPoints = new MetricPointsRepo(database, this.writer);
    this.runWorkers = new RunWorkersRepo(database, this.writer);
    this.output = new OutputTailRepo(database, this.writer, limits.maxOutputBytes);
    this.events = new EventsRepo(database, this.writer, limits.maxEvents);
    this.workers = new WorkerRegistryRepo(database, this.writer);
    this.nodeNames = new NodeNamesRepo(database, this.writer);
    this.nodeKeys = new NodeKeysRepo(database, this.writer);
    this.kv = new KvRepo(database, this.writer);
    this.jobs = new JobsRepo(database, this.writer);
    this.artifacts = new ArtifactsRepo(database, this.writer);
    this.vramPeaks = new VramPeaksRepo(database, this.writer);
    this.clusterHistory = new ClusterHistoryRepo(database, this.writer);
  }

  /** The run as the UI last saw it (shard history, loss, marks and worker rows included), or null. */
  loadRun(runId: string): RunSnapshot | null {
    return loadRunSnapshot(this, runId);
  }

  /** Every run kept, oldest first. */
  loadRuns(): RunSnapshot[] {
    return loadRunSnapshots(this);
  }

  /** Writes everything batched now (e.g. before reporting a run as finished). */
  flush(): void {
    this.writer.flush();
  }

  /** Flushes and closes; safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.writer.close();
    } finally {
      this.database.close();
    }
  }
}
