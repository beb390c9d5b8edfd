/**
 * The cluster's tokens, kept across restarts: the join token (workers that knew the coordinator come back
 * without a new one), the operator token, and the page token of `gpu-share serve` (an open tab reconnects
 * after a restart instead of knocking with a token that no longer works). Stored owner-only (0600) beside
 * cluster.yaml. A file from before a token existed keeps the tokens it has and gains the new one.
 * `gpu-share token rotate` replaces the join token; the replaced ones are kept (at most MAX_RETIRED_JOIN_TOKENS)
 * because machines already approved still hold them and keep joining with them (docs/api.md, "Joining").
 * Read and written through platform/files/private-file.ts: a symbolic link at secrets.json is refused (named),
 * never read from or written through.
 */
import path from 'node:path';
import { readPrivateFile, tightenToOwnerOnly, writePrivateFile } from '../platform/files/private-file';
import { SymlinkRefusedError } from '../platform/files/refuse-symlink';
import { generateToken } from '../platform/tokens';

export interface ClusterSecrets {
  joinToken: string;
  operatorToken: string;
  /** The token in the URL `gpu-share serve` prints. */
  pageToken: string;
  /** Join tokens replaced by a rotation, newest first: they let in only machines already approved. */
  retiredJoinTokens: string[];
}

export const MAX_RETIRED_JOIN_TOKENS = 8;

export const SECRETS_FILE = 'secrets.json';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{20,200}$/;
const TOKEN_NAMES = ['joinToken', 'operatorToken', 'pageToken'] as const;

const WHAT = "the cluster's tokens";

/** The stored object; {} when missing or not JSON. A symbolic link is refused (SymlinkRefusedError), not replaced. */
async function readStored(file: string): Promise<Partial<Record<string, unknown>>> {
  try {
    const text = await readPrivateFile(file, WHAT);
    if (text === null) return {};
    tightenToOwnerOnly(file, WHAT); // a file someone opened up is closed again
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch (error) {
    if (error instanceof SymlinkRefusedError) throw error;
    return {}; // Missing or unreadable: the tokens are made below.
  }
}

export async function loadOrCreateSecrets(dir: string): Promise<ClusterSecrets> {
  const file = path.join(dir, SECRETS_FILE);
  const stored = await readStored(file);
  const secrets = { retiredJoinTokens: retiredIn(stored.retiredJoinTokens) } as ClusterSecrets;
  // A damaged list is written back cleaned; a file from before rotation existed gains the list at its next write.
  let changed = Array.isArray(stored.retiredJoinTokens) && secrets.retiredJoinTokens.length !== stored.retiredJoinTokens.length;
  for (const name of TOKEN_NAMES) {
    const value = stored[name];
    if (typeof value === 'string' && TOKEN_PATTERN.test(value)) {
      secrets[name] = value;
    } else {
      secrets[name] = generateToken();
      changed = true;
    }
  }
  if (changed) await writeSecrets(dir, secrets);
  return secrets;
}

/** The retired tokens a file holds that are still tokens, at most MAX_RETIRED_JOIN_TOKENS. */
function retiredIn(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.filter((t): t is string => typeof t === 'string' && TOKEN_PATTERN.test(t)).slice(0, MAX_RETIRED_JOIN_TOKENS);
}

async function writeSecrets(dir: string, secrets: ClusterSecrets): Promise<void> {
  await writePrivateFile(path.join(dir, SECRETS_FILE), JSON.stringify(secrets, null, 2), WHAT);
}

/**
 * Replaces the join token in `secrets` (changed in place, so whoever holds it sees the new one) and in the file:
 * the old one goes first into retiredJoinTokens, the oldest beyond MAX_RETIRED_JOIN_TOKENS is forgotten.
 */
export async function rotateJoinToken(dir: string, secrets: ClusterSecrets): Promise<string> {
  const next: ClusterSecrets = {
    ...secrets,
    joinToken: generateToken(),
    retiredJoinTokens: [secrets.joinToken, ...secrets.retiredJoinTokens.filter((t) => t !== secrets.joinToken)].slice(0, MAX_RETIRED_JOIN_TOKENS),
  };
  await writeSecrets(dir, next);
  secrets.joinToken = next.joinToken;
  secrets.retiredJoinTokens = next.retiredJoinTokens;
  return next.joinToken;
}
