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
    super('This page needs the token printed by `gpu-share serve`: open the full URL it prints, including ?token=…');
    this.name = 'MissingTokenError';
  }
}

/** ws:// or wss:// URL of the server that served `pageUrl`, carrying the page's token. */
export function webSocketUrlFor(pageUrl: string): string {
  const page = new URL(pageUrl);
  const token = page.searchParams.get(TOKEN_PARAM);
  if (!token) throw new MissingTokenError();
  const scheme = page.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${page.host}${WS_PATH}?${TOKEN_PARAM}=${encodeURIComponent(token)}`;
}

const alwaysOpen: ConnectionState = { status: 'open', attempt: 0, retryInMs: null, opens: 1 };

function resolveApi(): { api: GpuShareApi; connection: Connection } {
  if (cached) return cached;
  if (window.gpuShare) {
    cached = { api: window.gpuShare, connection: { current: () => alwaysOpen, onChange: () => () => {}, close: () => {} } };
  } else {
    cached = createWsClient({ url: webSocketUrlFor(window.location.href) });
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
