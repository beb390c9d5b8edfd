/**
 * Schema 4: how each worker's part in a run ended (finished, failed, left, stopped), so an ended run's worker
 * table reads the same after a restart. Never edit this once released: change the schema with a new migration.
 */
export const SCHEMA_V4 = `
ALTER TABLE run_workers ADD COLUMN end_state TEXT CHECK (end_state IN ('finished', 'failed', 'left', 'stopped'));
`;
