/**
 * Schema 6: the trainer's other numbers per run (`lr`, `eval_loss`…; issue 25, "Any metric"), a point per metric
 * and step like loss_points, so a run's metric charts read the same after a restart. Never edit this once
 * released: change the schema with a new migration.
 */
export const SCHEMA_V6 = `
CREATE TABLE metric_points (
  run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name       TEXT NOT NULL,
  step       INTEGER NOT NULL,
  value      REAL NOT NULL,
  generation INTEGER NOT NULL,
  PRIMARY KEY (run_id, name, step)
) STRICT, WITHOUT ROWID;
`;
