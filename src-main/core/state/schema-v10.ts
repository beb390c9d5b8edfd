/**
 * Schema 10: every machine's CPU, RAM and GPU use, one row a machine and minute (issue 25: the Cluster over time
 * history survives a restart). Bounded by its writer (coordinator/cluster-history-book.ts, state/cluster-history-repo.ts):
 * 24 hours of minutes for at most 64 machines, older rows pruned. `samples` is how many heartbeats the minute
 * averaged, so a minute cut by a restart goes on with the right weight. Never edit this once released: change the
 * schema with a new migration.
 */
export const SCHEMA_V10 = `
CREATE TABLE cluster_history (
  node TEXT NOT NULL,
  at INTEGER NOT NULL,
  samples INTEGER NOT NULL,
  cpu_pct REAL,
  ram_used_mb REAL,
  ram_total_mb REAL,
  gpu_util_pct REAL,
  gpu_mem_used_mb REAL,
  gpu_mem_total_mb REAL,
  PRIMARY KEY (node, at)
) WITHOUT ROWID;
CREATE INDEX cluster_history_at ON cluster_history (at);
`;
