/**
 * Schema 1: the coordinator's state. STRICT tables, so a wrong type is an error rather than a silent coercion.
 * JSON columns hold the shapes of src-shared/training.ts verbatim (RunSpec, RunProgress, ShardRange[], …).
 * Never edit this once released: change the schema with a new migration in migrations.ts.
 */
export const SCHEMA_V1 = `
CREATE TABLE kv (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL              -- JSON
) STRICT;

CREATE TABLE runs (
  pos             INTEGER PRIMARY KEY,   -- creation order
  id              TEXT NOT NULL UNIQUE,
  spec            TEXT NOT NULL,         -- RunSpec JSON
  state           TEXT NOT NULL,
  state_cause     TEXT NOT NULL,
  generation      INTEGER NOT NULL,
  restarts_used   INTEGER NOT NULL,
  started_at      INTEGER NOT NULL,
  ended_at        INTEGER,
  worker_ids      TEXT NOT NULL,         -- number[] JSON: members of the current generation
  progress        TEXT,                  -- RunProgress JSON
  residency       TEXT NOT NULL,         -- Record<workerId, ResidencyVerdict> JSON
  rdzv_endpoint   TEXT,
  worker_failures INTEGER NOT NULL
) STRICT;

CREATE TABLE shard_maps (
  id            INTEGER PRIMARY KEY,
  run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  generation    INTEGER NOT NULL,
  total_samples INTEGER NOT NULL,
  shards        TEXT NOT NULL,           -- ShardRange[] JSON
  at            INTEGER NOT NULL,
  cause         TEXT NOT NULL
) STRICT;
CREATE INDEX shard_maps_by_run ON shard_maps(run_id, id);

CREATE TABLE generation_marks (
  run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  generation INTEGER NOT NULL,
  step       INTEGER NOT NULL,
  at         INTEGER NOT NULL,
  cause      TEXT NOT NULL,
  PRIMARY KEY (run_id, generation)
) STRICT, WITHOUT ROWID;

CREATE TABLE loss_points (
  run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step       INTEGER NOT NULL,
  loss       REAL NOT NULL,
  generation INTEGER NOT NULL,
  PRIMARY KEY (run_id, step)
) STRICT, WITHOUT ROWID;

CREATE TABLE run_workers (
  run_id          TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  worker_id       INTEGER NOT NULL,
  node            TEXT NOT NULL,
  member          INTEGER NOT NULL,
  step            INTEGER,
  loss            REAL,
  samples_per_sec REAL,
  restarts_caused INTEGER NOT NULL,
  PRIMARY KEY (run_id, worker_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE run_output (
  id        INTEGER PRIMARY KEY,
  run_id    TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  worker_id INTEGER NOT NULL,
  node      TEXT NOT NULL,
  data      TEXT NOT NULL,
  bytes     INTEGER NOT NULL             -- UTF-8 length of data
) STRICT;
CREATE INDEX run_output_by_run ON run_output(run_id, id);

-- Events outlive the runs they mention (runs are pruned), so run_id is not a foreign key.
CREATE TABLE events (
  seq        INTEGER PRIMARY KEY,
  at         INTEGER NOT NULL,
  kind       TEXT NOT NULL,
  severity   TEXT NOT NULL,
  message    TEXT NOT NULL,
  worker_id  INTEGER,
  run_id     TEXT,
  generation INTEGER
) STRICT;

CREATE TABLE workers (
  id                INTEGER PRIMARY KEY,
  node              TEXT NOT NULL,
  machine_hash      TEXT NOT NULL,       -- WorkerGate's hash of the machine id, never the id itself
  incarnation       INTEGER NOT NULL,
  gpus              TEXT NOT NULL,       -- WorkerGpu[] JSON
  backend           TEXT NOT NULL,
  address           TEXT,
  local             INTEGER NOT NULL,
  state             TEXT NOT NULL,
  state_cause       TEXT NOT NULL,
  joined_at         INTEGER NOT NULL,
  last_heartbeat_at INTEGER NOT NULL
) STRICT;
CREATE INDEX workers_by_node ON workers(node);

-- Which machine owns a node name (kept after the worker record is forgotten, as WorkerGate does).
CREATE TABLE node_names (
  node         TEXT PRIMARY KEY,
  machine_hash TEXT NOT NULL,
  first_from   TEXT,
  bound_at     INTEGER NOT NULL
) STRICT;
`;
