/**
 * Schema 7: a run's tags (a JSON array) and its note, written by the person (issue 25, "compare runs";
 * src-shared/runs/run-labels.ts bounds them). Never edit this once released: change the schema with a new migration.
 */
export const SCHEMA_V7 = `
ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';
`;
