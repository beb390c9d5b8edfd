/**
 * Serves the built renderer from one folder and nothing outside it: paths are decoded, normalised and
 * resolved (symlinks included) before the check, directories are never listed, and every answer carries
 * the page's security headers.
 */
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { HEADLESS_CSP, contentTypeFor, decodeRequestPath, isInsideRoot } from '../app/static-content';

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
  const decoded = decodeRequestPath(urlPath);
  if (decoded === null) return { ok: false, status: 400 };
  const relative = path.posix.normalize(decoded).replace(/^\/+/, '');
  if (relative.startsWith('..') || path.isAbsolute(relative)) return { ok: false, status: 404 };
  const candidate = path.resolve(root, relative);
  // Root itself is no file: it passes these checks and is refused by the stat below.
  if (!isInsideRoot(root, candidate)) return { ok: false, status: 404 };
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    return { ok: false, status: 404 };
  }
  // A symlink inside the folder must not lead out of it.
  if (!isInsideRoot(root, real)) return { ok: false, status: 404 };
  try {
    const info = await stat(real);
    if (!info.isFile()) return { ok: false, status: 404 };
  } catch {
    return { ok: false, status: 404 };
  }
  return { ok: true, filePath: real };
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
    'Content-Type': contentTypeFor(resolved.filePath),
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
