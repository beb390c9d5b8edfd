/**
 * What both ways of serving the built renderer agree on — the desktop app:// protocol and the headless HTTP
 * server: content types, the page's Content-Security-Policy and the path checks that keep requests inside the
 * folder. One copy, so a tightened rule or a new file type reaches both shells at once.
 */
import path from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.yaml': 'application/yaml; charset=utf-8',
  '.yml': 'application/yaml; charset=utf-8',
};

/** The Content-Type for a built file by its extension; unknown ones are sent as opaque bytes. */
export function contentTypeFor(file: string): string {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Scripts only from the page's own files (no inline, no eval); styles may be inline because xterm.js injects
 * <style> elements for its themes; nothing may frame the page or post forms anywhere. Only the image sources
 * differ between the shells.
 */
function pagePolicy(imageSources: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src ${imageSources}`,
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The desktop window's policy, sent with every app:// answer and forced onto every session response. */
export const CONTENT_SECURITY_POLICY = pagePolicy("'self' data:");

/**
 * The browser page's policy for the headless server: as the desktop's, plus blob: images; its WebSocket is
 * same-origin ('self' covers ws: to the same host and port in CSP3).
 */
export const HEADLESS_CSP = pagePolicy("'self' data: blob:");

/**
 * Decodes a request's URL path, or null when it cannot be decoded or carries a NUL byte or a backslash (a
 * Windows separator that could smuggle `..\`). An empty path or `/` means `/index.html`.
 */
export function decodeRequestPath(urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  return decoded === '/' || decoded === '' ? '/index.html' : decoded;
}

/** True when an absolute, resolved path is root itself or lies under it. */
export function isInsideRoot(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}
