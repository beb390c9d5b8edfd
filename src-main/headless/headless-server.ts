/**
 * `gpu-share serve`'s transport: the built renderer over HTTP and the ipc.ts contract over a WebSocket, so the
 * real UI runs in any browser. Guarded by a random token in the URL (compared in constant time), exchanged for an
 * HttpOnly page cookie (page-cookie.ts), and, by default, bound to 127.0.0.1; the socket also checks that the
 * page asking is this server's own (its Origin, required when only the cookie vouches for it). Bound beyond loopback it
 * speaks only HTTPS, with the coordinator's self-signed identity (tls-identity.ts), so the token never crosses a
 * network in clear; the person checks the certificate's fingerprint, which `serve` prints. Its sockets are bounded
 * as the coordinator port's are (connection-guard.ts): header and request deadlines, a cap per address and in
 * all, and a socket answered for being slow or malformed is destroyed, not half-closed.
 */
import { realpathSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { MAX_WS_MESSAGE_BYTES, SESSION_PATH, TOKEN_PARAM, WS_PATH, type PageSession, type WsServerMessage } from '../../src-shared/headless-protocol';
import type { EventMethod, EventPayloads } from '../../src-shared/ipc';
import { pageIsNotTheApi } from '../../src-shared/cli-address';
import { answerAndDestroy, answerClientErrors, guardConnections, PAGE_CONNECTION_LIMITS, type ConnectionLimits } from '../platform/net/connection-guard';
import { RememberedPeers } from '../platform/net/remembered-peers';
import { generateToken, tokensEqual } from '../platform/tokens';
import type { TlsIdentity } from '../platform/tls-identity';
import type { AppCore } from '../app/app-core-types';
import { dispatchRequest, RequestError } from '../app/ipc-dispatch';
import { pageCookieHeader, showsPageCookie } from './page-cookie';
import { securityHeaders, serveStatic } from './static-files';

export const DEFAULT_HEADLESS_PORT = 7420;

/** A socket whose unsent data passes this is too slow to keep up with live output; it is closed, not buffered forever. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
/** Ping interval; a socket that missed the previous pong is dropped (laptop lid closed, network gone). */
const PING_MS = 20_000;

export interface HeadlessServerOptions {
  host?: string;
  port?: number;
  staticDir: string;
  /**
   * The page token. `gpu-share serve` passes the one kept in secrets.json, so the URL (and an open tab's
   * reconnects) survive a restart; without it a fresh random one is made.
   */
  token?: string;
  /** Request headers must arrive within this long (ms) of the connection's first byte (default 5 s). */
  headersTimeoutMs?: number;
  /** A whole request must arrive within this long (ms) (default 30 s); an upgraded WebSocket is not limited. */
  requestTimeoutMs?: number;
  /**
   * Connection caps (default PAGE_CONNECTION_LIMITS: 32 per address, loopback included; 128 for the strangers of
   * one /24; 512 in all). Loopback and browsers that showed the token are served first.
   */
  connections?: ConnectionLimits;
  /** Peers served first without showing the token (default: loopback; tests on one machine name 127.0.0.1 alone). */
  alwaysServedFirst?: (address: string) => boolean;
  /**
   * The certificate and key the page is served with over HTTPS. Required when `host` is beyond loopback
   * (pageNeedsTls); given on loopback it forces HTTPS there too (tests).
   */
  tls?: TlsIdentity;
  /**
   * The coordinator API's URL (and its certificate's fingerprint over https), named when the CLI is pointed at
   * this port by mistake: API paths (/v1/…) are answered 421 with the `--url` to use (cli-address.ts).
   */
  api?: { url: string; certSha256: string | null };
}

export interface HeadlessServer {
  /** The URL to open, token included: http://127.0.0.1:7420/?token=… (https:// beyond loopback) */
  url: string;
  port: number;
  token: string;
  /** SHA-256 of the certificate served (64 lowercase hex digits) when the page speaks HTTPS; null over plain http. */
  certSha256: string | null;
  /** Connections the port holds now (connection-guard.ts). */
  openConnections(): number;
  close(): Promise<void>;
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_NAMES.has(host.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Must the page port speak HTTPS when bound to `host`? Yes for anything beyond loopback (0.0.0.0, ::, a LAN
 * address, a name): the token in the URL would otherwise cross the network in clear. Loopback stays plain http.
 */
export function pageNeedsTls(host: string): boolean {
  return !isLoopbackHost(host);
}

/** Host part for a URL: IPv6 in brackets; a wildcard bind is reached through loopback from this machine. */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

function splitHostHeader(value: string): { name: string; port: string | null } {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value.trim().toLowerCase());
  return m ? { name: m[1]!, port: m[2] ?? null } : { name: '', port: null };
}

/**
 * Is this upgrade request from a page this server served? The Origin (when the client sends one — browsers
 * always do) must be <scheme>://<the Host it asked for>, and on a loopback bind that Host must be a loopback name
 * with our port, which shuts out DNS-rebinding pages even before the token is checked.
 */
export function originAllowed(req: IncomingMessage, boundHost: string, port: number, scheme: 'http' | 'https' = 'http'): boolean {
  const hostHeader = req.headers.host;
  if (!hostHeader) return false;
  const host = splitHostHeader(hostHeader);
  if (isLoopbackHost(boundHost)) {
    if (!isLoopbackHost(host.name) || host.port !== String(port)) return false;
  }
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  return origin.toLowerCase() === `${scheme}://${hostHeader.toLowerCase()}`;
}

function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  answerAndDestroy(
    socket,
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function rawToString(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}

/** Parses one page → server message; returns the id it carried (if any) with an error for anything malformed. */
export function parseRequestMessage(text: string): { ok: true; id: number; method: string; arg: unknown } | { ok: false; id: number | null; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, id: null, error: 'message is not JSON: send {"id": 1, "method": "getCluster", "arg": …}' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, id: null, error: 'message must be a JSON object {"id", "method", "arg"}' };
  }
  const record = value as Record<string, unknown>;
  const id = record.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) {
    return { ok: false, id: null, error: 'message needs "id", a whole number that the answer will carry back' };
  }
  if (typeof record.method !== 'string') return { ok: false, id, error: 'message needs "method", the name of a request (e.g. "getCluster")' };
  return { ok: true, id, method: record.method, arg: record.arg };
}

function errorText(error: unknown): string {
  if (error instanceof RequestError) return error.message;
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/** Who the page is: where it is served, its token, and the peers that showed the token (served first). */
interface PageContext {
  host: string;
  scheme: 'http' | 'https';
  token: string;
  /** The port bound (0 until it listens). */
  port: () => number;
  provers: RememberedPeers;
  api: HeadlessServerOptions['api'];
}

/** HTTP requests: the page's files and its session; the token in the address is exchanged for the page cookie (page-cookie.ts). */
function pageRequests(ctx: PageContext, root: string): (req: IncomingMessage, res: ServerResponse) => void {
  const showsToken = (req: IncomingMessage): boolean => {
    const given = new URL(req.url ?? '/', 'http://localhost').searchParams.get(TOKEN_PARAM);
    return given !== null && tokensEqual(given, ctx.token);
  };
  return (req, res) => {
    let withToken = false;
    try {
      withToken = showsToken(req);
    } catch {
      // an unparsable URL: serveStatic answers it
    }
    const withCookie = showsPageCookie(req, ctx.token, ctx.port());
    // The page then drops the token from its address.
    if (withToken) res.setHeader('Set-Cookie', pageCookieHeader(ctx.token, ctx.port(), ctx.scheme === 'https'));
    if (withToken || withCookie) ctx.provers.remember(req.socket.remoteAddress);
    const requestPath = (req.url ?? '').split('?')[0]!;
    if (requestPath.startsWith('/v1/')) {
      // The CLI (or a script) given the page's address: say which --url and token it needs, not "Not found".
      const error = pageIsNotTheApi(`${ctx.scheme}://${urlHost(ctx.host)}:${ctx.port()}`, ctx.api?.url ?? null, ctx.api?.certSha256 ?? null);
      res.writeHead(421, { ...securityHeaders(), 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify({ error }));
      return;
    }
    if (req.method === 'GET' && requestPath === SESSION_PATH) {
      const session: PageSession = { signedIn: withToken || withCookie };
      res.writeHead(200, { ...securityHeaders(), 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify(session));
      return;
    }
    serveStatic(root, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { ...securityHeaders(), 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Internal error\n');
    });
  };
}

/** The WebSocket's door: its path, the token or the page cookie, and (with the cookie alone) this server's own Origin. */
function acceptUpgrades(server: Server, wss: WebSocketServer, ctx: PageContext): void {
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      refuseUpgrade(socket, 400, 'Bad Request');
      return;
    }
    if (url.pathname !== WS_PATH) {
      refuseUpgrade(socket, 404, 'Not Found');
      return;
    }
    const given = url.searchParams.get(TOKEN_PARAM);
    const withToken = given !== null && tokensEqual(given, ctx.token);
    if (!withToken && !showsPageCookie(req, ctx.token, ctx.port())) {
      refuseUpgrade(socket, 401, 'Unauthorized');
      return;
    }
    // A browser sends the cookie on its own, so a socket opened with the cookie alone must come from this
    // server's own page: its Origin is required, not just checked when present (cross-site WebSocket hijacking).
    if (!originAllowed(req, ctx.host, ctx.port(), ctx.scheme) || (!withToken && req.headers.origin === undefined)) {
      refuseUpgrade(socket, 403, 'Forbidden');
      return;
    }
    ctx.provers.remember(req.socket.remoteAddress);
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
}

/** Each page's socket: the core's events out, its requests in and their answers out; a page that falls behind or stops answering pings is dropped. */
function servePageSockets(wss: WebSocketServer, core: AppCore): NodeJS.Timeout {
  const alive = new WeakMap<WebSocket, boolean>();
  wss.on('connection', (ws: WebSocket) => {
    alive.set(ws, true);
    const send = (message: WsServerMessage): void => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        ws.close(1013, 'the page is not keeping up; reload it');
        return;
      }
      ws.send(JSON.stringify(message));
    };
    const unsubscribe = core.subscribe(<E extends EventMethod>(event: E, payload: EventPayloads[E]) => {
      send({ event, payload } as WsServerMessage);
    });
    ws.on('pong', () => alive.set(ws, true));
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        send({ id: null, ok: false, error: 'binary messages are not part of the protocol: send JSON text' });
        return;
      }
      const parsed = parseRequestMessage(rawToString(data));
      if (!parsed.ok) {
        send({ id: parsed.id, ok: false, error: parsed.error });
        return;
      }
      dispatchRequest(core.handlers, parsed.method, parsed.arg).then(
        (result) => send({ id: parsed.id, ok: true, result }),
        (error: unknown) => send({ id: parsed.id, ok: false, error: errorText(error) }),
      );
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', () => unsubscribe());
  });
  const pinger = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, PING_MS);
  pinger.unref();
  return pinger;
}

export async function startHeadlessServer(core: AppCore, opts: HeadlessServerOptions): Promise<HeadlessServer> {
  const host = opts.host ?? '127.0.0.1';
  const token = opts.token ?? generateToken();
  const root = realpathSync(opts.staticDir);
  const tls = opts.tls ?? null;
  if (!tls && pageNeedsTls(host)) {
    throw new Error(`the page would listen on ${host} in plain http, and its token would cross the network in clear: give it the TLS identity (tls), or bind it to 127.0.0.1`);
  }
  const scheme = tls ? 'https' : 'http';
  let boundPort = 0;
  const provers = new RememberedPeers(1_024, opts.alwaysServedFirst);
  const ctx: PageContext = { host, scheme, token, port: () => boundPort, provers, api: opts.api };

  const headersTimeoutMs = opts.headersTimeoutMs ?? 5_000;
  // Node checks these deadlines only every connectionsCheckingInterval (30 s by default). Headers are held to
  // 16 KiB (a browser's, cookies included), so what one socket's parser holds is bounded.
  const serverOptions = { connectionsCheckingInterval: Math.min(1_000, Math.max(100, headersTimeoutMs / 2)), maxHeaderSize: 16 * 1024 };
  const onRequest = pageRequests(ctx, root);
  // A TLS handshake gets the same deadline as the headers that follow it.
  const server: Server = tls
    ? https.createServer({ ...serverOptions, handshakeTimeout: headersTimeoutMs, cert: tls.certPem, key: tls.keyPem }, onRequest)
    : createServer(serverOptions, onRequest);
  server.headersTimeout = headersTimeoutMs;
  // Node's requestTimeout ends once a request is upgraded, so it holds for page files and not for the WebSocket.
  server.requestTimeout = Math.max(opts.requestTimeoutMs ?? 30_000, headersTimeoutMs);
  const guard = guardConnections(server, opts.connections ?? PAGE_CONNECTION_LIMITS, provers.servedFirst);
  answerClientErrors(server);
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_WS_MESSAGE_BYTES });
  acceptUpgrades(server, wss, ctx);
  const pinger = servePageSockets(wss, core);

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(opts.port ?? DEFAULT_HEADLESS_PORT, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  boundPort = (server.address() as AddressInfo).port;

  let closing: Promise<void> | null = null;
  return {
    url: `${scheme}://${urlHost(host)}:${boundPort}/?${TOKEN_PARAM}=${encodeURIComponent(token)}`,
    port: boundPort,
    token,
    certSha256: tls ? tls.fingerprint256 : null,
    openConnections: () => guard.open(),
    close() {
      closing ??= new Promise<void>((resolve) => {
        clearInterval(pinger);
        for (const ws of wss.clients) ws.close(1001, 'GPU Share is shutting down');
        wss.close();
        server.close(() => resolve());
        // Sockets still open after the goodbye (a browser that never answers) must not hold the process.
        setTimeout(() => {
          for (const ws of wss.clients) ws.terminate();
          server.closeAllConnections();
        }, 500).unref();
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
