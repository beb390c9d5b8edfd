/**
 * The coordinator's certificate fingerprint as people paste it. A coordinator that listens beyond loopback
 * serves HTTPS with a self-signed certificate, and workers trust it by the SHA-256 fingerprint its join command
 * prints (`--cert-sha256 …`); people copy that from a terminal, a chat or a browser's certificate viewer, so
 * "AB:CD:…", "sha256:abcd…" and plain hex all mean the same fingerprint.
 */

/** 64 lowercase hex digits, or null when `raw` is not a SHA-256 fingerprint in any of the usual spellings. */
export function normalizeCertSha256(raw: string): string | null {
  const hex = raw.trim().replace(/^sha-?256:\s*/i, '').replace(/[:\s]/g, '').toLowerCase();
  return /^[0-9a-f]{64}$/.test(hex) ? hex : null;
}
