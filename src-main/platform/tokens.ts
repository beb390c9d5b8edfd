/**
 * Bearer tokens for the coordinator API: made from the OS's CSPRNG and compared in constant time, so a
 * worker on the LAN cannot learn a token byte by byte from how long a refusal takes.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes, base64url (43 characters): safe in a URL, a header and a shell command line. */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * True when both strings are the same token. Both are hashed first so the comparison takes the same time
 * whatever their lengths (timingSafeEqual itself refuses buffers of different lengths, which would leak the length).
 */
export function tokensEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}
