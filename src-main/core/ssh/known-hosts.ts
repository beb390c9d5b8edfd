/**
 * ~/.ssh/known_hosts, read the way OpenSSH reads it: plain and hashed (|1|salt|hmac) host patterns, `[host]:port`
 * for ports other than 22, wildcards and negations, @revoked lines. A key the file does not know is "unknown" (the
 * person is shown its fingerprint and asked); a different key for a known host is "changed" and refused, because
 * that is exactly what a man in the middle looks like. That holds for a key of ANOTHER type too (ed25519 known, RSA
 * presented): offering it as merely "unknown" would let an interceptor downgrade the check to a click. OpenSSH
 * avoids the case by asking for the known type first and warns when it still happens; GPU Share refuses.
 */
import { createHash, createHmac } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export type HostKeyVerdict =
  | { status: 'known' }
  | { status: 'unknown'; fingerprint: string; keyType: string }
  /** `keyType` is the presented key's type; `knownKeyType` the type of the key on `line`, which may differ. */
  | { status: 'changed'; fingerprint: string; keyType: string; knownKeyType: string; line: number }
  | { status: 'revoked'; fingerprint: string; line: number };

/** OpenSSH's fingerprint of a public key blob: SHA256: and unpadded base64. */
export function hostKeyFingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type a wire-format key blob starts with (ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa …). */
export function keyTypeOf(keyBlob: Buffer): string {
  if (keyBlob.length < 4) return 'unknown';
  const len = keyBlob.readUInt32BE(0);
  return keyBlob.subarray(4, 4 + len).toString('latin1');
}

/** How the host is written in known_hosts: bare for port 22, [host]:port otherwise. */
export function knownHostName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function globMatch(pattern: string, text: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 'i');
  return re.test(text);
}

function hashedMatch(entry: string, name: string): boolean {
  const [, magic, salt, hash] = entry.split('|');
  if (magic !== '1' || !salt || !hash) return false;
  return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
}

/** Whether a comma-separated host field matches: any positive pattern and no negated one. */
function hostFieldMatches(field: string, name: string): boolean {
  if (field.startsWith('|')) return hashedMatch(field, name);
  let matched = false;
  for (const pattern of field.split(',')) {
    if (pattern.startsWith('!')) {
      if (globMatch(pattern.slice(1), name)) return false;
    } else if (globMatch(pattern, name)) {
      matched = true;
    }
  }
  return matched;
}

/** Judges the key a server presented against the text of a known_hosts file. */
export function checkHostKey(knownHostsText: string, host: string, port: number, keyBlob: Buffer): HostKeyVerdict {
  const name = knownHostName(host, port);
  const keyType = keyTypeOf(keyBlob);
  const presented = keyBlob.toString('base64');
  const fingerprint = hostKeyFingerprint(keyBlob);
  let changedLine = 0;
  let changedType = '';
  let known = false;
  const lines = knownHostsText.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const fields = lines[i]!.trim().split(/\s+/);
    if (fields[0] === '' || fields[0]!.startsWith('#')) continue;
    let marker: string | null = null;
    if (fields[0]!.startsWith('@')) marker = fields.shift()!;
    const [hosts, type, key] = fields;
    if (!hosts || !type || !key || marker === '@cert-authority') continue;
    if (!hostFieldMatches(hosts, name)) continue;
    if (marker === '@revoked') {
      if (key === presented) return { status: 'revoked', fingerprint, line: i + 1 };
      continue;
    }
    if (type === keyType && key === presented) {
      known = true;
    } else if (changedLine === 0 || (changedType !== keyType && type === keyType)) {
      // Any other key for this host, of any type, means the presented one is not the machine's: the first line of
      // the presented type is named when there is one, else the first line of another type.
      changedLine = i + 1;
      changedType = type;
    }
  }
  if (known) return { status: 'known' };
  if (changedLine > 0) return { status: 'changed', fingerprint, keyType, knownKeyType: changedType, line: changedLine };
  return { status: 'unknown', fingerprint, keyType };
}

export async function readKnownHosts(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

/** Records a key the person accepted, as OpenSSH would (a plain line; the folder made 0700 when missing). */
export async function addKnownHost(file: string, host: string, port: number, keyBlob: Buffer): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const existing = await readKnownHosts(file);
  const sep = existing === '' || existing.endsWith('\n') ? '' : '\n';
  await appendFile(file, `${sep}${knownHostName(host, port)} ${keyTypeOf(keyBlob)} ${keyBlob.toString('base64')}\n`, { mode: 0o600 });
}
