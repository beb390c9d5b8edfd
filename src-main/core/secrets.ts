/**
 * The cluster's join and operator tokens, kept across restarts so workers that knew the coordinator
 * can come back without a new token. Stored owner-only (0600) beside cluster.yaml.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateToken } from './api/tokens';

export interface ClusterSecrets {
  joinToken: string;
  operatorToken: string;
}

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{20,200}$/;

export async function loadOrCreateSecrets(dir: string): Promise<ClusterSecrets> {
  const file = path.join(dir, 'secrets.json');
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<ClusterSecrets>;
    if (TOKEN_PATTERN.test(parsed.joinToken ?? '') && TOKEN_PATTERN.test(parsed.operatorToken ?? '')) {
      return { joinToken: parsed.joinToken!, operatorToken: parsed.operatorToken! };
    }
  } catch {
    // Missing or unreadable: make new ones below.
  }
  const secrets = { joinToken: generateToken(), operatorToken: generateToken() };
  await mkdir(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  await rename(tmp, file);
  return secrets;
}
