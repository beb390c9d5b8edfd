/**
 * What a coordinator URL may be and when it may be spoken to: a --join / --url value checked, and the pin a
 * https coordinator needs (its certificate is self-signed). Shared by the worker agent and the operator CLI,
 * which both talk to the coordinator's HTTP API.
 */
import { normalizeCertSha256 } from '../../../src-shared/cert-fingerprint';
import { clearTextProblem, type ClearTextUse } from '../../../src-shared/cluster/clear-text';

/** Environment variable that may carry the coordinator's certificate fingerprint instead of --cert-sha256. */
export const CERT_ENV = 'GPU_SHARE_CERT_SHA256';

/** Checks a --join value: an http(s) URL with a host and nothing after the path; the message says what is wrong. */
export function parseCoordinatorUrl(raw: string): { ok: true; url: URL } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: `"${raw}" is not a URL; expected something like https://192.168.1.20:7421 (or http://127.0.0.1:7421 on this machine)` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, message: `"${raw}" uses ${url.protocol.replace(/:$/, '')}://; the coordinator speaks http:// or https:// only` };
  }
  if (!url.hostname) return { ok: false, message: `"${raw}" has no host` };
  if (url.username || url.password) return { ok: false, message: `"${raw}" carries a user name or password; pass the token in GPU_SHARE_JOIN_TOKEN instead` };
  if (url.search || url.hash) return { ok: false, message: `"${raw}" has a query or fragment; give only scheme, host and port` };
  return { ok: true, url };
}

/**
 * Whether `url` may be spoken to with this fingerprint: https needs one (the coordinator's certificate is
 * self-signed, so only the pin can tell it from an impostor), and http with one is refused too, because the
 * join command that carried it was for https: following an http URL instead would send the token in the clear.
 * Plain http beyond loopback is refused as well (clear-text.ts), before anything is sent. Null when fine, else
 * the message for the person.
 */
export function trustProblem(url: URL, certSha256: string | undefined, use: ClearTextUse = 'worker'): string | null {
  const given = certSha256?.trim() ? certSha256.trim() : undefined;
  if (given !== undefined && !normalizeCertSha256(given)) {
    return `"${given}" is not a SHA-256 certificate fingerprint (64 hex digits); copy the whole join command from the coordinator's "Add a worker" panel`;
  }
  if (url.protocol === 'https:' && given === undefined) {
    return `${url.origin} speaks https, and its certificate can only be trusted by the fingerprint the join command carries (--cert-sha256 HEX, or ${CERT_ENV}); copy the whole join command from the coordinator's "Add a worker" panel`;
  }
  if (url.protocol === 'http:' && given !== undefined) {
    return `a certificate fingerprint was given but ${url.origin} is plain http, where the join token would travel unencrypted; use the https:// URL of the join command`;
  }
  return clearTextProblem(url, use);
}
