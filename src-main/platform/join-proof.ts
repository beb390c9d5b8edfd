/**
 * The join's mutual proof of the join token (docs/api.md, "Joining"): before a worker sends anything about
 * itself, coordinator and worker each prove they hold the cluster's join token with an HMAC over both sides'
 * nonces, the coordinator's certificate fingerprint and the worker's node key — so the token itself never
 * crosses the wire, a server that does not hold it learns nothing, and a relay with another certificate fails.
 * Here in platform because both the agent (worker side) and core (coordinator side) compute it.
 */
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

const SALT = 'gpu-share/join/v1';
const INFO = 'join-proof';
const TRANSCRIPT_LABEL = 'gpu-share join v1';

/** The key both sides derive from the join token (HKDF-SHA256, 32 bytes); the token itself is never sent. */
export function joinKey(token: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(token, 'utf8'), Buffer.from(SALT, 'utf8'), Buffer.from(INFO, 'utf8'), 32));
}

/** Names a token without revealing it: lets the coordinator tell which of its tokens (current or retired) a worker holds. */
export function tokenId(token: string): string {
  return createHmac('sha256', joinKey(token)).update('token-id', 'utf8').digest('hex').slice(0, 16);
}

export interface TranscriptParts {
  workerNonce: string;
  coordinatorNonce: string;
  /** The coordinator's certificate fingerprint, lower-case 64 hex; "none" over plain http. */
  certSha256: string;
  /** The worker's raw Ed25519 public key, base64url; "" for a worker without one. */
  nodePublicKey: string;
}

/** The text both proofs cover, one part a line. */
export function joinTranscript(parts: TranscriptParts): string {
  return [TRANSCRIPT_LABEL, parts.workerNonce, parts.coordinatorNonce, parts.certSha256, parts.nodePublicKey].join('\n');
}

/** The fingerprint as the transcript spells it: lower-case hex without separators, or "none" (plain http). */
export function transcriptCert(certSha256: string | null | undefined): string {
  return certSha256 ? certSha256.replace(/[^0-9a-fA-F]/g, '').toLowerCase() : 'none';
}

function proof(key: Buffer, role: 'coordinator' | 'worker', transcript: string): string {
  return createHmac('sha256', key).update(`${role}\n${transcript}`, 'utf8').digest('base64url');
}

/** The coordinator's answer to a challenge: proves it holds the token, bound to this transcript. */
export function coordinatorProof(key: Buffer, transcript: string): string {
  return proof(key, 'coordinator', transcript);
}

/** The worker's proof, sent with its join. */
export function workerProof(key: Buffer, transcript: string): string {
  return proof(key, 'worker', transcript);
}

/** Compares two proofs in constant time (both hashed first, so differing lengths leak nothing either). */
export function proofsEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

/** 32 random bytes, base64url. */
export function joinNonce(): string {
  return randomBytes(32).toString('base64url');
}

