/**
 * Every machine's minutes of CPU, RAM and GPU use (schema 10), so the Cluster over time history survives a restart.
 * What to keep is decided by coordinator/service/cluster-history-book.ts (24 h, at most 64 machines): it saves a minute when
 * it closes, forgets a machine it drops and prunes old minutes; all batched (a SIGKILL loses at most the minute
 * being filled and the last flushMs). `load` enforces the same bound on whatever the file holds.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { ClusterHistoryPoint } from '../../../src-shared/cluster/cluster-history';
import type { BatchedWriter } from './batched-writer';
import { PendingList } from './pending-queues';

/** A kept minute and how many heartbeats it averaged. */
export interface StoredClusterPoint extends ClusterHistoryPoint {
  samples: number;
}

export interface StoredClusterNode {
  node: string;
  points: StoredClusterPoint[];
}

type Op = { kind: 'save'; node: string; point: StoredClusterPoint } | { kind: 'forget'; node: string } | { kind: 'prune'; oldest: number };

interface Row {
  node: string;
  at: number;
  samples: number;
  cpu_pct: number | null;
  ram_used_mb: number | null;
  ram_total_mb: number | null;
  gpu_util_pct: number | null;
  gpu_mem_used_mb: number | null;
  gpu_mem_total_mb: number | null;
}

export class ClusterHistoryRepo {
  private readonly upsert: Statement<Row>;
  private readonly forgetStmt: Statement<[string]>;
  private readonly pruneStmt: Statement<[number]>;
  private readonly dropBeyond: Statement<[number]>;
  private readonly listStmt: Statement<[], Row>;
  private readonly pending: PendingList<Op>;

  constructor(
    db: Database,
    private readonly writer: BatchedWriter,
  ) {
    this.upsert = db.prepare(
      `INSERT OR REPLACE INTO cluster_history (node, at, samples, cpu_pct, ram_used_mb, ram_total_mb, gpu_util_pct, gpu_mem_used_mb, gpu_mem_total_mb)
       VALUES (@node, @at, @samples, @cpu_pct, @ram_used_mb, @ram_total_mb, @gpu_util_pct, @gpu_mem_used_mb, @gpu_mem_total_mb)`,
    );
    this.forgetStmt = db.prepare('DELETE FROM cluster_history WHERE node = ?');
    this.pruneStmt = db.prepare('DELETE FROM cluster_history WHERE at <= ?');
    // Every machine but the `?` heard from last (by their newest minute).
    this.dropBeyond = db.prepare(
      'DELETE FROM cluster_history WHERE node NOT IN (SELECT node FROM cluster_history GROUP BY node ORDER BY MAX(at) DESC, node LIMIT ?)',
    );
    this.listStmt = db.prepare('SELECT * FROM cluster_history ORDER BY node, at');
    this.pending = new PendingList(writer, (batch) => this.write(batch));
  }

  /** Queues writing machine `node`'s minute (replacing a row for the same minute). */
  save(node: string, point: StoredClusterPoint): void {
    this.pending.push({ kind: 'save', node, point: { ...point } }, 96 + node.length);
  }

  /** Queues removing every minute of machine `node`. */
  forget(node: string): void {
    this.pending.push({ kind: 'forget', node }, 32 + node.length);
  }

  /** Queues removing every minute at or before `oldest` (epoch ms). */
  prune(oldest: number): void {
    this.pending.push({ kind: 'prune', oldest }, 16);
  }

  /** What is kept after `oldest`, for at most `maxNodes` machines (those heard from last); the rest is deleted first. */
  load(oldest: number, maxNodes: number): StoredClusterNode[] {
    this.writer.writeNow(() => {
      this.pruneStmt.run(oldest);
      this.dropBeyond.run(maxNodes);
    });
    const nodes: StoredClusterNode[] = [];
    for (const row of this.writer.read(() => this.listStmt.all())) {
      let last = nodes.at(-1);
      if (last?.node !== row.node) nodes.push((last = { node: row.node, points: [] }));
      last.points.push({
        at: row.at,
        samples: row.samples,
        cpuPct: row.cpu_pct,
        ramUsedMb: row.ram_used_mb,
        ramTotalMb: row.ram_total_mb,
        gpuUtilPct: row.gpu_util_pct,
        gpuMemUsedMb: row.gpu_mem_used_mb,
        gpuMemTotalMb: row.gpu_mem_total_mb,
      });
    }
    return nodes;
  }

  private write(batch: Op[]): void {
    for (const op of batch) {
      if (op.kind === 'forget') this.forgetStmt.run(op.node);
      else if (op.kind === 'prune') this.pruneStmt.run(op.oldest);
      else {
        const p = op.point;
        this.upsert.run({
          node: op.node,
          at: p.at,
          samples: p.samples,
          cpu_pct: p.cpuPct,
          ram_used_mb: p.ramUsedMb,
          ram_total_mb: p.ramTotalMb,
          gpu_util_pct: p.gpuUtilPct,
          gpu_mem_used_mb: p.gpuMemUsedMb,
          gpu_mem_total_mb: p.gpuMemTotalMb,
        });
      }
    }
  }
}
