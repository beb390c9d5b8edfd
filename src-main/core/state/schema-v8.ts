/**
 * Schema 8: the job and the node an event is about (issue 25: events linked to their run, job or node, and
 * filtered by each). Rows from before have neither: they still link by run, and by node where a worker was named.
 * Never edit this once released: change the schema with a new migration.
 */
export const SCHEMA_V8 = `
ALTER TABLE events ADD COLUMN job_id TEXT;
ALTER TABLE events ADD COLUMN node TEXT;
`;
