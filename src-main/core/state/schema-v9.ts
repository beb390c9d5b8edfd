/**
 * Schema 9: when the coordinator received each piece of a job's output (epoch ms), so a job's lines have times as a
 * run's do (issue 25, item 7). Rows from before have none: their lines show no time. Never edit this once released:
 * change the schema with a new migration.
 */
export const SCHEMA_V9 = `
ALTER TABLE job_output ADD COLUMN received_at INTEGER;
`;
