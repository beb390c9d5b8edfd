/**
 * Schema 5: when the coordinator received each piece of a run's output (epoch ms), so its lines keep their times
 * across a restart (issue 25, item 7). Rows from before have none: their lines show no time. Never edit this once
 * released: change the schema with a new migration.
 */
export const SCHEMA_V5 = `
ALTER TABLE run_output ADD COLUMN received_at INTEGER;
`;
