/**
 * The `app://gpu-share/` protocol that serves the built renderer. A custom standard scheme gives the page a
 * real origin of its own: `'self'` in the CSP then means our files only (under file:// it would mean every
 * local file), the trusted-sender check can compare origins, and no file:// privileges reach the page.
 */
import { protocol } from 'electron';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CONTENT_SECURITY_POLICY, contentTypeFor, decodeRequestPath, isInsideRoot } from '../app/static-content';

export const APP_SCHEME = 'app';
export const APP_HOST = 'gpu-share';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_PAGE_URL = `${APP_ORIGIN}/index.html`;

/** True when a URL belongs to the app's own page (same scheme and host), whatever its path. */
export function isAppUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === `${APP_SCHEME}:` && parsed.host === APP_HOST;
  } catch {
    return false;
  }
}

/**
 * Maps a request URL to a file under rootDir, or null when the URL is not ours or would leave rootDir
 * (`..`, encoded separators, NUL). `/` means index.html.
 */
export function resolveAppFile(url: string, rootDir: string): string | null {
  if (!isAppUrl(url)) return null;
  const pathname = decodeRequestPath(new URL(url).pathname);
  if (pathname === null) return null;
  const root = path.resolve(rootDir);
  const file = path.resolve(root, `.${pathname}`);
  return isInsideRoot(root, file) ? file : null;
}

function textResponse(status: number, text: string): Response {
  return new Response(text, {
    status,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Security-Policy': CONTENT_SECURITY_POLICY },
  });
}

/** Answers one app:// request from rootDir; every answer carries the CSP. */
export async function serveAppRequest(request: Request, rootDir: string): Promise<Response> {
  if (request.method !== 'GET' && request.method !== 'HEAD') return textResponse(405, `${request.method} is not allowed`);
  const file = resolveAppFile(request.url, rootDir);
  if (!file) return textResponse(404, 'not found');
  try {
    const body = await readFile(file);
    return new Response(request.method === 'HEAD' ? null : new Uint8Array(body), {
      status: 200,
      headers: {
        'Content-Type': contentTypeFor(file),
        'Content-Security-Policy': CONTENT_SECURITY_POLICY,
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-cache',
      },
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') {
      const isPage = path.basename(file) === 'index.html';
      return textResponse(
        404,
        isPage
          ? `GPU Share's page is missing: ${file} does not exist. Run \`npm run build\` and start the app again.`
          : `not found: ${new URL(request.url).pathname}`,
      );
    }
    return textResponse(500, `could not read ${file}: ${(error as Error).message}`);
  }
}

/** Must run before the app is ready: makes app:// a standard, secure scheme with its own origin. */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } },
  ]);
}

/** Serves the built renderer (dist/renderer) at app://gpu-share/. */
export function handleAppProtocol(rootDir: string): void {
  protocol.handle(APP_SCHEME, (request) => serveAppRequest(request, rootDir));
}
