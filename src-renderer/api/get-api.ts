/**
 * Where the page gets the contract from: the Electron preload's `window.gpuShare` when it is there, else a
 * WebSocket to the `gpu-share serve` that served this page. Views never know which one they talk to.
 */
import type { GpuShareApi } from '../../src-shared/ipc';
// Brings in the one ambient declaration of window.gpuShare, also for tsconfigs that do not include env.d.ts.
import type {} from '../env';
import { TOKEN_PARAM, WS_PATH } from '../../src-shared/headless-protocol';
import { createWsClient, type Connection, type ConnectionState } from './ws-client';

let cached: { api: GpuShareApi; connection: Connection } | null = null;

/** Thrown when the page was opened without the token `gpu-share serve` printed. */
export class MissingTokenError extends Error {
  constructor() {
    super(
      'This page needs the token printed by `gpu-share serve`: open the full URL it prints, including ?token=…, in this tab. ' +
        'Shared links leave the token out on purpose; once this tab has it, a link such as …/#/runs/run-3 opens here (or put ?token=… before its #).',
    );
    this.name = 'MissingTokenError';
  }
}

/** ws:// or wss:// URL of the server that served `pageUrl`, carrying the page's token (from the URL, else `kept`). */
export function webSocketUrlFor(pageUrl: string, kept: string | null = null): string {
  const page = new URL(pageUrl);
  const token = page.searchParams.get(TOKEN_PARAM) || kept;
  if (!token) throw new MissingTokenError();
  const scheme = page.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${page.host}${WS_PATH}?${TOKEN_PARAM}=${encodeURIComponent(token)}`;
}

/** Where this tab keeps the token once the address bar no longer shows it; per server, gone with the tab. */
export const TOKEN_STORAGE_KEY = 'gpu-share.token';

/** What adoptPageToken needs of the page: its address, this tab's storage and a way to rewrite the address. */
export interface TokenPage {
  href: string;
  storage: Pick<Storage, 'getItem' | 'setItem'> | null;
  replaceUrl(url: string): void;
}

/**
 * Takes the token out of the address bar, so a link copied from it (or a screenshot of it) does not carry it:
 * the token moves to this tab's sessionStorage and the address keeps its path and #route. Returns the token to
 * connect with: the one in the address, else the one this tab kept, else null.
 */
export function adoptPageToken(page: TokenPage): string | null {
  const url = new URL(page.href);
  const key = `${TOKEN_STORAGE_KEY}:${url.host}`;
  const fromUrl = url.searchParams.get(TOKEN_PARAM);
  if (!fromUrl) return page.storage?.getItem(key) ?? null;
  try {
    page.storage?.setItem(key, fromUrl);
  } catch {
    return fromUrl; // storage full or refused: keep the token in the address rather than lose the connection
  }
  url.searchParams.delete(TOKEN_PARAM);
  page.replaceUrl(url.toString());
  return fromUrl;
}

function sessionStorageOrNull(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null; // storage disabled for this page
  }
}

const alwaysOpen: ConnectionState = { status: 'open', attempt: 0, retryInMs: null, opens: 1 };

function resolveApi(): { api: GpuShareApi; connection: Connection } {
  if (cached) return cached;
  if (window.gpuShare) {
    cached = { api: window.gpuShare, connection: { current: () => alwaysOpen, onChange: () => () => {}, close: () => {} } };
  } else {
    const kept = adoptPageToken({ href: window.location.href, storage: sessionStorageOrNull(), replaceUrl: (url) => window.history.replaceState(window.history.state, '', url) });
    cached = createWsClient({ url: webSocketUrlFor(window.location.href, kept) });
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
