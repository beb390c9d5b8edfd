/**
 * The WebSocket framing that carries the ipc.ts contract in headless mode (`gpu-share serve`).
 * Both ends import it so the page and the server cannot drift; the contract itself stays in ipc.ts.
 */
import type { EventMethod, EventPayloads } from './ipc';

/** Path of the WebSocket endpoint; the page adds `?token=…` when it has the token, else its cookie proves it. */
export const WS_PATH = '/ws';

/**
 * Path the page asks (GET, same origin) whether this browser already holds the page cookie, before it opens the
 * socket: answers `{"signedIn": true|false}`, so a tab without token or cookie shows the field to paste the token.
 */
export const SESSION_PATH = '/session';

/** What SESSION_PATH answers. */
export interface PageSession {
  signedIn: boolean;
}

/** Query parameter carrying the session token, in the page URL and the WebSocket URL alike. */
export const TOKEN_PARAM = 'token';

/**
 * Largest message either side accepts. importCluster carries up to 1 MiB of YAML, which JSON escaping can
 * double (quotes, backslashes); 4 MiB leaves room without letting one message eat the server's memory.
 */
export const MAX_WS_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Page → server: one request of the contract. */
export interface WsRequestMessage {
  id: number;
  method: string;
  arg?: unknown;
}

/** Server → page: the answer to one request. `id` is null when the request was too broken to have one. */
export type WsResponseMessage =
  | { id: number; ok: true; result: unknown }
  | { id: number | null; ok: false; error: string };

/** Server → page: one main → renderer event of the contract, pushed as it happens. */
export type WsEventMessage = {
  [E in EventMethod]: { event: E; payload: EventPayloads[E] };
}[EventMethod];

export type WsServerMessage = WsResponseMessage | WsEventMessage;
