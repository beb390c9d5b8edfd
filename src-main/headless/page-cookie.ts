/**
 * The page cookie of `gpu-share serve` (issue 25 item 5): a browser that opened the page with its token gets an
 * HttpOnly, SameSite=Strict cookie for this server's origin, so every tab of that browser opens any link without
 * the token in its address. The cookie allows exactly what the token allows — the page's WebSocket — and nothing
 * more: its value is derived from the token (an HMAC), so it dies when the token changes, and cannot be pasted
 * as the token itself. Cookies ignore ports, so its name carries the port: two servers on one host never mix.
 */
import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { tokensEqual } from '../platform/tokens';

/** The cookie's name for the server on `port` (cookies are shared by every port of a host name). */
export function pageCookieName(port: number): string {
  return `gpu-share-page-${port}`;
}

/** The value the cookie carries for `token`: HMAC-SHA256 of a fixed label, base64url. */
export function pageCookieValue(token: string): string {
  return createHmac('sha256', token).update('gpu-share page cookie v1').digest('base64url');
}

/**
 * The Set-Cookie header a request that showed the token gets. No Max-Age: it lasts while the browser runs.
 * Secure over HTTPS. Path=/ so the socket's upgrade (/ws) and the session check carry it.
 */
export function pageCookieHeader(token: string, port: number, secure: boolean): string {
  return `${pageCookieName(port)}=${pageCookieValue(token)}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The values of every cookie named `name` in a Cookie header (a browser may send two of one name). */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (!header) return [];
  const values: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/** Does this request carry the page cookie of the server on `port` with `token`? Compared in constant time. */
export function showsPageCookie(req: IncomingMessage, token: string, port: number): boolean {
  const expected = pageCookieValue(token);
  return cookieValues(req.headers.cookie, pageCookieName(port)).some((value) => tokensEqual(value, expected));
}
