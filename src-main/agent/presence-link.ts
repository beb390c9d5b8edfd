/**
 * The presence link: a WebSocket the agent keeps open to the coordinator for its whole session, so that the
 * agent's death is seen at once (its kernel closes the socket without a close frame) instead of after the
 * heartbeat timeout. The one rule that follows: while this process lives, a presence socket must never end
 * without a close frame, or the coordinator would take a live agent for a dead one. So a socket that looks
 * stale is closed with RECONNECTING (never terminated) and replaced, one that drops is reopened with backoff,
 * and a clean exit says BYE. Heartbeats stay on HTTP; this link only proves liveness — its pings, one per half
 * timeout, count as proof of life, so a fault on the heartbeats' own connection alone fails no one. Not more
 * often: a SIGKILL while a pong sits unread makes the kernel reset the socket instead of closing it, and a reset
 * reads as a network fault (the timeout decides) rather than a death (failed at once).
 */
import WebSocket from 'ws';
import { workerApi } from '../../src-shared/worker-api';
import { PRESENCE_CLOSE, PRESENCE_POKE } from '../../src-shared/worker-protocol';
import { systemClock, type Clock } from '../platform/ports';
import type { Connector } from '../platform/net/pinned-connection';
import { loopbackOnlyLookup } from '../platform/net/loopback-lookup';

export const PRESENCE_BACKOFF = { firstMs: 250, maxMs: 2000 } as const;
/** How long a clean exit waits for the coordinator to answer its BYE before moving on. */
export const BYE_WAIT_MS = 1000;
/** Close reasons are short by protocol (123 bytes); ours are cut to this. */
export const MAX_REASON_BYTES = 100;

export interface PresenceLinkOptions {
  /** ws:// or wss:// URL of the session's presence endpoint. */
  url: URL;
  /** The session's secret and a signature (never the join token); asked for at every connect (a signature's nonce is used once). */
  headers: () => Record<string, string>;
  /** The pinned TLS connection for wss (null for ws). */
  connector: Connector | null;
  /** The failure timeout in force: pings go once per half of it, and one unanswered at the next marks the socket stale. */
  heartbeatTimeoutMs: () => number;
  /** The coordinator closed with REFUSED: it no longer knows this session. */
  onRefused: (reason: string) => void;
  /** The coordinator has instructions waiting: heartbeat now instead of at the next interval. */
  onPoke?: () => void;
  log: (line: string) => void;
  clock?: Clock;
}

/** The presence endpoint of a worker, ws:// or wss:// to match the coordinator's http:// or https://. */
export function presenceUrl(base: URL, workerId: number): URL {
  const url = new URL(workerApi.presence.path.build(workerId), base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url;
}

/** `text` cut to at most `maxBytes` of UTF-8 without splitting a character. */
export function cutUtf8(text: string, maxBytes = MAX_REASON_BYTES): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let out = '';
  for (const ch of text) {
    if (Buffer.byteLength(out + ch) > maxBytes) break;
    out += ch;
  }
  return out;
}

export class PresenceLink {
  private readonly clock: Clock;
  private socket: WebSocket | null = null;
  private ended = false;
  private backoffMs: number = PRESENCE_BACKOFF.firstMs;
  private reconnectTimer: { cancel(): void } | null = null;
  private pingTimer: { cancel(): void } | null = null;
  private lastComplaint = '';

  constructor(private readonly opts: PresenceLinkOptions) {
    this.clock = opts.clock ?? systemClock;
  }

  start(): void {
    if (!this.ended && !this.socket) this.connect();
  }

  /** Whether a socket is open now. */
  isOpen(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /**
   * The deathrattle: closes with BYE and `reason`, waiting (at most BYE_WAIT_MS) for the coordinator's answer,
   * so it arrives before whatever the agent says next (the leave). The link does not reopen afterwards.
   */
  async close(reason: string): Promise<void> {
    this.ended = true;
    this.reconnectTimer?.cancel();
    this.pingTimer?.cancel();
    const ws = this.socket;
    if (!ws) return;
    if (ws.readyState === WebSocket.CONNECTING) await this.settled(ws, 'open');
    // Still connecting: its 'open' handler says BYE when it gets there (aborting could end a socket the
    // coordinator has already accepted without a close frame).
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.close(PRESENCE_CLOSE.BYE, cutUtf8(reason));
    await this.settled(ws, 'close');
  }

  private settled(ws: WebSocket, event: 'open' | 'close'): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(done, BYE_WAIT_MS);
      function done() {
        timer.cancel();
        ws.off(event, done);
        ws.off('close', done);
        resolve();
      }
      ws.once(event, done);
      ws.once('close', done);
    });
  }

  private complain(message: string): void {
    if (message === this.lastComplaint) return;
    this.lastComplaint = message;
    this.opts.log(`presence link: ${message}`);
  }

  private halfTimeout(): number {
    return Math.max(100, Math.floor(this.opts.heartbeatTimeoutMs() / 2));
  }

  private connect(): void {
    const ws = new WebSocket(this.opts.url, {
      headers: this.opts.headers(),
      perMessageDeflate: false,
      followRedirects: false,
      maxPayload: 64 * 1024,
      handshakeTimeout: Math.max(1000, this.halfTimeout()),
      // Plain ws only to this machine: `localhost` must resolve to loopback before the session secret goes out.
      ...(this.opts.connector ? { createConnection: this.opts.connector as unknown as NonNullable<WebSocket.ClientOptions['createConnection']> } : { lookup: loopbackOnlyLookup() }),
    });
    this.socket = ws;
    ws.on('open', () => {
      if (this.ended || ws !== this.socket) {
        ws.close(this.ended ? PRESENCE_CLOSE.BYE : PRESENCE_CLOSE.RECONNECTING);
        return;
      }
      this.backoffMs = PRESENCE_BACKOFF.firstMs;
      if (this.lastComplaint) this.opts.log('presence link: open again');
      this.lastComplaint = '';
      this.watch(ws);
    });
    // Errors end in 'close' too; the listener keeps them from being thrown.
    ws.on('error', (error) => this.complain(error.message));
    // The only message the coordinator sends; anything else is ignored (it proves nothing and asks nothing).
    ws.on('message', (data, isBinary) => {
      if (!isBinary && ws === this.socket && String(data) === PRESENCE_POKE) this.opts.onPoke?.();
    });
    ws.on('close', (code, reasonBuffer) => {
      if (ws !== this.socket) return; // one we replaced
      this.pingTimer?.cancel();
      this.socket = null;
      if (this.ended) return;
      const reason = reasonBuffer.toString('utf8');
      if (code === PRESENCE_CLOSE.REFUSED) {
        this.ended = true;
        this.opts.onRefused(reason || 'refused');
        return;
      }
      if (code === PRESENCE_CLOSE.REPLACED) {
        // Another link of this session took over: fighting it would only make the two replace each other.
        this.ended = true;
        this.opts.log(`presence link: replaced by another link of this session${reason ? ` (${reason})` : ''}; not reopening`);
        return;
      }
      if (code !== 1000 && code !== 1005) this.complain(`closed (${code}${reason ? ` ${reason}` : ''})`);
      this.reconnectLater();
    });
  }

  private reconnectLater(): void {
    const delay = this.backoffMs;
    this.backoffMs = Math.min(PRESENCE_BACKOFF.maxMs, this.backoffMs * 2);
    this.reconnectTimer = this.clock.setTimeout(() => {
      this.reconnectTimer = null;
      if (!this.ended && !this.socket) this.connect();
    }, delay);
  }

  /**
   * Pings every ping interval (the coordinator counts each as proof of life, so they go out even while one is
   * unanswered); a ping unanswered for half the timeout means the socket is stale.
   */
  private watch(ws: WebSocket): void {
    let unansweredSince: number | null = null;
    ws.on('pong', () => {
      unansweredSince = null;
    });
    this.pingTimer?.cancel();
    this.pingTimer = this.clock.setInterval(() => {
      if (ws !== this.socket || ws.readyState !== WebSocket.OPEN) return;
      const now = this.clock.monotonic();
      if (unansweredSince !== null && now - unansweredSince >= this.halfTimeout()) {
        this.replace(ws);
        return;
      }
      unansweredSince ??= now;
      ws.ping();
    }, this.halfTimeout()); // not more often: see the file's comment
  }

  /** Swaps a stale socket for a new one, saying so on the old one: a frame, never a bare end. */
  private replace(stale: WebSocket): void {
    this.pingTimer?.cancel();
    this.complain(`no answer to a ping within ${this.halfTimeout()} ms; opening a new link`);
    this.socket = null;
    stale.close(PRESENCE_CLOSE.RECONNECTING, 'no pong');
    this.connect();
  }
}
