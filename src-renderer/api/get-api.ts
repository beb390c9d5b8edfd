/**
 * Where the page gets the contract from: the Electron preload's `window.gpuShare` when it is there, else a
 * WebSocket to the `gpu-share serve` that served this page, let in by the token in the address or by the
 * browser's page cookie (src-main/headless/page-cookie.ts). Views never know which one they talk to.
 */
import type { GpuShareApi } from '../../src-shared/ipc';
// Brings in the one ambient declaration of window.gpuShare, also for tsconfigs that do not include env.d.ts.
import type {} from '../env';
import { SESSION_PATH, TOKEN_PARAM, WS_PATH, type PageSession } from '../../src-shared/headless-protocol';
import { createWsClient, type Connection, type ConnectionState } from './ws-client';

let cached: { api: GpuShareApi; connection: Connection } | null = null;

/** Thrown when the page has neither the token in its address nor the page cookie: the page shows a field for it. */
export class MissingTokenError extends Error {
  constructor() {
    super(
      'This page needs the token printed by `gpu-share serve` (the part after ?token= of the URL it prints). Paste it, or that whole URL, below; ' +
        'or open that URL in this browser once — after that every tab of this browser opens any link, such as …/#/runs/run-3, without it.',
    );
    this.name = 'MissingTokenError';
  }
}

/**
 * ws:// or wss:// URL of the server that served `pageUrl`. With a token (from the address, else `kept`) it
 * carries it; without one it carries nothing and the browser's page cookie vouches for the socket.
 */
export function webSocketUrlFor(pageUrl: string, kept: string | null = null): string {
  const page = new URL(pageUrl);
  const token = page.searchParams.get(TOKEN_PARAM) || kept;
  const scheme = page.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${page.host}${WS_PATH}${token ? `?${TOKEN_PARAM}=${encodeURIComponent(token)}` : ''}`;
}

/** What adoptPageToken needs of the page: its address and a way to rewrite it. */
export interface TokenPage {
  href: string;
  replaceUrl(url: string): void;
}

/**
 * Takes the token out of the address bar, so a link copied from it (or a screenshot of it) does not carry it.
 * The server already swapped it for the page cookie when it served this page; the address keeps its path and
 * #route. Returns the token (kept in memory only, for this page's reconnects), or null when the address had none.
 */
export function adoptPageToken(page: TokenPage): string | null {
  const url = new URL(page.href);
  const fromUrl = url.searchParams.get(TOKEN_PARAM);
  if (!fromUrl) return null;
  url.searchParams.delete(TOKEN_PARAM);
  page.replaceUrl(url.toString());
  return fromUrl;
}

/**
 * Does this browser hold the page cookie of the server at `pageUrl`? Asks SESSION_PATH. A server that does not
 * answer counts as yes: the socket then shows "reconnecting" instead of asking for a token the browser may hold.
 */
export async function hasPageCookie(pageUrl: string, fetchFn: typeof fetch): Promise<boolean> {
  let response: Response;
  try {
    response = await fetchFn(new URL(SESSION_PATH, pageUrl).toString(), { credentials: 'same-origin', cache: 'no-store' });
  } catch {
    return true;
  }
  if (!response.ok) return true;
  try {
    const session = (await response.json()) as Partial<PageSession> | null;
    return session?.signedIn === true;
  } catch {
    return true;
  }
}

/** The token this page load was opened with; null when the page cookie is what lets it in. */
let pageToken: string | null = null;

/**
 * Run once before getApi in a browser tab: moves the token out of the address, or checks that the page cookie is
 * there. Throws MissingTokenError when neither is, so the page shows the field to paste the token.
 */
export async function preparePageAccess(): Promise<void> {
  if (window.gpuShare) return;
  pageToken = adoptPageToken({ href: window.location.href, replaceUrl: (url) => window.history.replaceState(window.history.state, '', url) });
  if (pageToken) return;
  if (!(await hasPageCookie(window.location.href, window.fetch.bind(window)))) throw new MissingTokenError();
}

const alwaysOpen: ConnectionState = { status: 'open', attempt: 0, retryInMs: null, opens: 1 };

function resolveApi(): { api: GpuShareApi; connection: Connection } {
  if (cached) return cached;
  if (window.gpuShare) {
    cached = { api: window.gpuShare, connection: { current: () => alwaysOpen, onChange: () => () => {}, close: () => {} } };
  } else {
    cached = createWsClient({ url: webSocketUrlFor(window.location.href, pageToken) });
  }
  return cached;
}

export function getApi(): GpuShareApi {
  return resolveApi().api;
}

/** The transport's connection state, for the "Disconnected — reconnecting…" banner. */
export function getConnection(): Connection {
  return resolveApi().connection;
}
