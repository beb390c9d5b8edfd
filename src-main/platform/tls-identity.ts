/**
 * The coordinator's TLS identity: a self-signed certificate made once and kept, so its SHA-256 fingerprint
 * (which the join command carries and workers pin) stays the same across restarts. There is no CA to vouch for
 * a machine on a home network; pinning the fingerprint is what keeps a stranger from posing as the coordinator.
 * The file holds the private key: it is read and written through platform/files/private-file.ts, so a symbolic
 * link at it is refused (named) instead of read (a key of someone else's choosing) or written through.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import path from 'node:path';
import { generate } from 'selfsigned';
import { normalizeCertSha256 } from '../../src-shared/cert-fingerprint';
import { readPrivateFile, writePrivateFile } from './files/private-file';
import { SymlinkRefusedError } from './files/refuse-symlink';

export interface TlsIdentity {
  certPem: string;
  keyPem: string;
  /** SHA-256 of the certificate (DER): 64 lowercase hex digits, no colons. */
  fingerprint256: string;
}

export const TLS_IDENTITY_FILE = 'coordinator-tls.json';
const COMMON_NAME = 'GPU Share coordinator';
/** The name the certificate answers to, for clients that pin it as a CA and check the name. */
export const CERT_DNS_NAME = 'gpu-share-coordinator';
const VALIDITY_YEARS = 10;
const WHAT = "the coordinator's TLS certificate and key";
/** A certificate this close to its end is replaced at start rather than left to expire mid-run. */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

/** The fingerprint of a PEM certificate; throws when it is not one. */
export function fingerprintOf(certPem: string): string {
  return normalizeCertSha256(new X509Certificate(certPem).fingerprint256)!;
}

/** Parses a stored identity; null when anything is off (garbage, expired, key not the certificate's). */
function check(text: string, now: number): TlsIdentity | null {
  try {
    const stored = JSON.parse(text) as { certPem?: unknown; keyPem?: unknown };
    if (typeof stored.certPem !== 'string' || typeof stored.keyPem !== 'string') return null;
    const cert = new X509Certificate(stored.certPem);
    if (!cert.checkPrivateKey(createPrivateKey(stored.keyPem))) return null;
    if (Date.parse(cert.validTo) - RENEW_BEFORE_MS < now) return null;
    return { certPem: stored.certPem, keyPem: stored.keyPem, fingerprint256: fingerprintOf(stored.certPem) };
  } catch {
    return null;
  }
}

async function create(now: number): Promise<TlsIdentity> {
  const notBeforeDate = new Date(now - 60_000); // a little slack for clocks that disagree by a minute
  const notAfterDate = new Date(notBeforeDate);
  notAfterDate.setUTCFullYear(notAfterDate.getUTCFullYear() + VALIDITY_YEARS);
  const pems = await generate([{ name: 'commonName', value: COMMON_NAME }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    // Workers trust the pinned fingerprint, not names. The one DNS name is for tools that check names against
    // a CA file (Prometheus' tls_config.server_name, curl --cacert with --connect-to): docs/metrics.md.
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: CERT_DNS_NAME }] },
    ],
  });
  return { certPem: pems.cert, keyPem: pems.private, fingerprint256: fingerprintOf(pems.cert) };
}

/**
 * The identity kept in `dir`, made (and stored owner-only, atomically) when there is none or the stored one is
 * unreadable, garbage or about to expire. A new one has a new fingerprint: workers then need the new join command.
 */
export async function loadOrCreateTlsIdentity(dir: string, now = Date.now()): Promise<TlsIdentity> {
  const file = path.join(dir, TLS_IDENTITY_FILE);
  const existing = await readPrivateFile(file, WHAT).then(
    (text) => (text === null ? null : check(text, now)),
    (error: unknown) => {
      if (error instanceof SymlinkRefusedError) throw error;
      return null; // unreadable: made afresh below
    },
  );
  if (existing) return existing;
  const identity = await create(now);
  await writePrivateFile(file, JSON.stringify({ version: 1, certPem: identity.certPem, keyPem: identity.keyPem }, null, 2), WHAT);
  return identity;
}
