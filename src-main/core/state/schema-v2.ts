/**
 * Schema 2: the adapter-job queue, its output tails, the artifact index and the measured VRAM peaks.
 * The CHECKs hold the queue's invariants in SQLite itself, so no code path (nor a crash halfway through one)
 * can leave a job with an unknown status, a claimed job without its claim, or a pending job still on a node.
 * Never edit this once released: change the schema with a new migration in migrations.ts.
 */
export const SCHEMA_V2 = `
CREATE TABLE jobs (
  seq          INTEGER PRIMARY KEY,        -- queue order: the manifest's order, then later manifests'
  id           TEXT NOT NULL UNIQUE,       -- sha256 of the defining fields (hex)
  name         TEXT NOT NULL,
  spec         TEXT NOT NULL,              -- JobSpec JSON
  status       TEXT NOT NULL CHECK (status IN ('pending', 'claimed', 'running', 'completed', 'failed', 'cancelled')),
  attempts     INTEGER NOT NULL CHECK (attempts >= 0),
  max_attempts INTEGER NOT NULL CHECK (max_attempts >= 1),
  claim_id     TEXT,                       -- the current claim's random id (fencing token = claim_id.attempts)
  node         TEXT,
  worker_id    INTEGER,
  gpu_index    INTEGER,
  held_vram_mb REAL NOT NULL,
  last_node    TEXT,                       -- where the last attempt ran, kept after node is cleared
  reason       TEXT,
  artifact     TEXT,                       -- sha256 of the output tarball
  progress     TEXT,                       -- JobProgress JSON
  peak_vram_mb REAL,
  over_budget  INTEGER NOT NULL CHECK (over_budget IN (0, 1)),
  in_manifest  INTEGER NOT NULL CHECK (in_manifest IN (0, 1)),
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  claimed_at   INTEGER,
  heartbeat_at INTEGER,
  started_at   INTEGER,
  finished_at  INTEGER,
  CHECK (status NOT IN ('claimed', 'running') OR (claim_id IS NOT NULL AND node IS NOT NULL AND worker_id IS NOT NULL AND heartbeat_at IS NOT NULL)),
  CHECK (status IN ('claimed', 'running', 'completed') OR (claim_id IS NULL AND node IS NULL AND worker_id IS NULL AND gpu_index IS NULL)),
  CHECK (status <> 'completed' OR artifact IS NOT NULL)
) STRICT;
CREATE INDEX jobs_by_status ON jobs(status, seq);
CREATE INDEX jobs_by_worker ON jobs(worker_id) WHERE worker_id IS NOT NULL;

-- A job's output tail: chunks, oldest first, trimmed to about the last 256 KiB per job.
CREATE TABLE job_output (
  id     INTEGER PRIMARY KEY,
  job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  data   TEXT NOT NULL,
  bytes  INTEGER NOT NULL                  -- UTF-8 length of data
) STRICT;
CREATE INDEX job_output_by_job ON job_output(job_id, id);

-- Content-addressed artifacts: one row per distinct tarball, however many attempts produced it.
CREATE TABLE artifacts (
  sha256     TEXT PRIMARY KEY,
  size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
  created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Which job attempt produced which artifact (jobs are never deleted, so job_id stays resolvable).
CREATE TABLE artifact_producers (
  sha256  TEXT NOT NULL REFERENCES artifacts(sha256) ON DELETE CASCADE,
  job_id  TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  at      INTEGER NOT NULL,
  PRIMARY KEY (sha256, job_id, attempt)
) STRICT, WITHOUT ROWID;

-- The highest VRAM measured per model and mode: later jobs of the same kind are placed on it.
CREATE TABLE vram_peaks (
  model      TEXT NOT NULL,
  mode       TEXT NOT NULL,
  peak_mb    REAL NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (model, mode)
) STRICT, WITHOUT ROWID;
`;
