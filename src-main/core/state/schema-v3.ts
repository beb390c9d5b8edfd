/**
 * Schema 3: each node's pinned Ed25519 public key (node identity, issue 9) and the new key it presented, held
 * back until the person accepts it. Never edit this once released: change the schema with a new migration.
 */
export const SCHEMA_V3 = `
CREATE TABLE node_keys (
  node        TEXT PRIMARY KEY,
  public_key  TEXT NOT NULL,               -- raw Ed25519 key, base64url
  pinned_at   INTEGER NOT NULL,
  pending_key TEXT,                        -- a new key the node signed a join with, waiting for acceptance
  pending_at  INTEGER,
  CHECK ((pending_key IS NULL) = (pending_at IS NULL))
) STRICT, WITHOUT ROWID;
`;
