/**
 * Forces the page's Content-Security-Policy (defined in app/static-content, shared with the headless server)
 * onto every response the desktop session receives, so no response can bring a laxer one.
 */
import { CONTENT_SECURITY_POLICY } from '../app/static-content';

/** Returns a copy of response headers with our CSP replacing any the response carried (any letter case). */
export function withContentSecurityPolicy(
  headers: Record<string, string | string[]> | undefined,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() === 'content-security-policy') continue;
    out[name] = Array.isArray(value) ? value : [value];
  }
  out['Content-Security-Policy'] = [CONTENT_SECURITY_POLICY];
  return out;
}
