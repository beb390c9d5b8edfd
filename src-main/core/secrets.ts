/**
 * The cluster's tokens, kept across restarts: the join token (workers that knew the coordinator come back
 * without a new one), the operator token, and the page token of `gpu-share serve` (an open tab reconnects
 * after a restart instead of knocking with a token that no longer works). Stored owner-only (0600) beside
 * cluster.yaml. A file from before a token existed keeps the tokens it has and gains the new one.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateToken } from './api/tokens';

export interface ClusterSecrets {
  joinToken: string;
  operatorToken: string;
  /** The token in the URL `gpu-share serve` prints. */
  pageToken: string;
}

export const SECRETS_FILE = 'secrets.json';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{20,200}$/;
const TOKEN_NAMES = ['joinToken', 'operatorToken', 'pageToken'] as const;

async function readStored(file: string): Promise<Partial<Record<string, unknown>>> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {}; // Missing or unreadable: the tokens are made below.
  }
}

export async function loadOrCreateSecrets(dir: string): Promise<ClusterSecrets> {
  const file = path.join(dir, SECRETS_FILE);
  const stored = await readStored(file);
  const secrets = {} as ClusterSecrets;
  let changed = false;
  for (const name of TOKEN_NAMES) {
    const value = stored[name];
    if (typeof value === 'string' && TOKEN_PATTERN.test(value)) {
      secrets[name] = value;
    } else {
      secrets[name] = generateToken();
      changed = true;
    }
  }
  if (!changed) return secrets;
  await mkdir(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  await rename(tmp, file);
  return secrets;
}
