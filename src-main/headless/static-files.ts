/**
 * Serves the built renderer from one folder and nothing outside it: paths are decoded, normalised and
 * resolved (symlinks included) before the check, directories are never listed, and every answer carries
 * the page's security headers.
 */
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';

/**
 * The page's Content-Security-Policy. Scripts only from the server's own files (no inline, no eval); styles may
 * be inline because xterm.js injects <style> elements for its theme; the WebSocket is same-origin ('self'
 * covers ws: to the same host and port in CSP3).
 */
export const HEADLESS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const MIME_TYPES: Record<string, string> = {
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
  '.txt': 'text/plain; charset=utf-8',
  '.yaml': 'application/yaml; charset=utf-8',
  '.yml': 'application/yaml; charset=utf-8',
};

export function mimeTypeFor(filePath: string): string {
  return MIME_TYPES[path.extname(filePath).toLowerCase()] ?? 'application/octet-stream';
}

/** Headers every response of the server carries, the 404s included. */
export function securityHeaders(): Record<string, string> {
  return {
    'Content-Security-Policy': HEADLESS_CSP,
    'X-Content-Type-Options': 'nosniff',
    // The page URL carries the token: never send it on as a Referer.
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}

export type ResolveResult = { ok: true; filePath: string } | { ok: false; status: 400 | 404 };

/**
 * Maps a URL path to a file under `root`, or refuses it. `root` must already be a real (symlink-free) path.
 * Refused: undecodable escapes, NUL bytes, backslashes (Windows separators), anything resolving outside root.
 */
export async function resolveStaticPath(root: string, urlPath: string): Promise<ResolveResult> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return { ok: false, status: 400 };
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return { ok: false, status: 400 };
  const relative = decoded === '/' || decoded === '' ? 'index.html' : path.posix.normalize(decoded).replace(/^\/+/, '');
  if (relative.startsWith('..') || path.isAbsolute(relative)) return { ok: false, status: 404 };
  const candidate = path.resolve(root, relative);
  if (!isInside(root, candidate)) return { ok: false, status: 404 };
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    return { ok: false, status: 404 };
  }
  // A symlink inside the folder must not lead out of it.
  if (!isInside(root, real)) return { ok: false, status: 404 };
  try {
    const info = await stat(real);
    if (!info.isFile()) return { ok: false, status: 404 };
  } catch {
    return { ok: false, status: 404 };
  }
  return { ok: true, filePath: real };
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function sendPlain(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...securityHeaders(), 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...extra });
  res.end(text);
}

/** Answers one HTTP request from the static folder (GET and HEAD only). */
export async function serveStatic(root: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendPlain(res, 405, 'Method not allowed\n', { Allow: 'GET, HEAD' });
    return;
  }
  const rawPath = (req.url ?? '/').split('?')[0]!.split('#')[0]!;
  const resolved = await resolveStaticPath(root, rawPath);
  if (!resolved.ok) {
    sendPlain(res, resolved.status, resolved.status === 400 ? 'Bad request\n' : 'Not found\n');
    return;
  }
  const info = await stat(resolved.filePath);
  const isIndex = path.basename(resolved.filePath) === 'index.html';
  // Vite names built assets by content hash, so they never change under the same name.
  const hashed = /[.-][A-Za-z0-9_-]{8,}\.(js|css|woff2?|png|svg)$/.test(resolved.filePath) && !isIndex;
  res.writeHead(200, {
    ...securityHeaders(),
    'Content-Type': mimeTypeFor(resolved.filePath),
    'Content-Length': String(info.size),
    'Cache-Control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(resolved.filePath);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
