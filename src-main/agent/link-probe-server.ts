/**
 * The agent's link probe server (issue 16, item 1): other agents measure their link to this machine by pinging it
 * and sending it a bounded stream of bytes over the address training uses. It answers only a connection whose
 * first line is a token the coordinator told it to expect (`accept-link-probe`): single use, expiring, at most a
 * few held. Anything else is closed at once. Everything a peer can make it do is bounded: connections at once,
 * the time to present the token, the bytes and the wall-clock of one probe. A connection from an address the
 * coordinator did not name with a token it holds (the probing member's addresses) is closed before it takes a
 * slot, and one address holds one slot at most (issue 26, item 7): a stranger cannot starve the members' probes.
 * Refusals are logged as one summary line a minute (refusal-summary.ts), never one line each.
 *
 * The conversation, after "<token>\n" and the server's "OK\n": "PING\n" is answered "PONG\n" (round-trip time);
 * "DATA <maxMs>\n" starts the transfer: raw bytes until the sender half-closes, or until maxMs (capped) or the byte
 * cap is reached, when the server answers "GOT <bytes> <ms>\n": the bytes that arrived after the first chunk and the
 * milliseconds between the first chunk's arrival and the last one's (so the sender's buffering does not count).
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { LINK_PROBE_CAPS } from '../../src-shared/links/link-probe-protocol';
import { RefusalSummary } from './refusal-summary';

export interface LinkProbeServerOptions {
  /** Wall time for token expiry (injectable for tests). */
  now?: () => number;
  /** Tokens held at once; the oldest is dropped beyond it. */
  maxTokens?: number;
  /** Connections served at once; more are closed at once. */
  maxConnections?: number;
  /** Time a connection has to present its token. */
  tokenWaitMs?: number;
  /** Bytes one transfer may send; the answer comes when they are in. */
  maxBytes?: number;
  /** Wall-clock cap of one connection, whatever it does. */
  wallMs?: number;
  /** How often the refusal summary line may be written (default one minute). */
  refusalLogMs?: number;
  log?: (line: string) => void;
}

export const LINK_PROBE_SERVER_DEFAULTS = { maxTokens: 16, maxConnections: 2, tokenWaitMs: 2000, maxBytes: LINK_PROBE_CAPS.maxBytes, wallMs: 15_000 } as const;

/** The longest line the server reads before the transfer (a token or a command). */
const MAX_LINE = 256;
/** Pings one connection may send (the client sends 5): answers to a peer that does not read cannot pile up. */
export const MAX_PINGS = 32;

export class LinkProbeServer {
  private readonly server: Server;
  /** Token → who may present it: the node, and its addresses (null: any address, from a coordinator that names none). */
  private readonly tokens = new Map<string, { fromNode: string; from: ReadonlySet<string> | null; expiresAt: number }>();
  private readonly sockets = new Set<Socket>();
  /** Addresses holding a slot now (one each). */
  private readonly busy = new Set<string>();
  private readonly refusals: RefusalSummary;
  private readonly opts: Required<Omit<LinkProbeServerOptions, 'log' | 'refusalLogMs'>> & { log: (line: string) => void };
  /** Connections closed because they did not show a token they were told to expect (for tests and logs). */
  refused = 0;

  constructor(opts: LinkProbeServerOptions = {}) {
    this.opts = { now: Date.now, ...LINK_PROBE_SERVER_DEFAULTS, log: () => undefined, ...opts } as LinkProbeServer['opts'];
    this.refusals = new RefusalSummary({ log: this.opts.log, label: 'link probe server', everyMs: opts.refusalLogMs });
    this.server = createServer({ allowHalfOpen: true }, (socket) => this.serve(socket));
    this.server.on('error', (error) => this.opts.log(`link probe server: ${error.message}`));
  }

  /** Listens on an ephemeral port on every interface; resolves with the port. */
  listen(port = 0, host?: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /**
   * The coordinator's `accept-link-probe`: the next connection that presents `token` before it expires is from
   * fromNode, connecting from one of `fromAddresses` (any address when the coordinator named none).
   */
  expect(token: string, fromNode: string, expiresInMs: number, fromAddresses?: readonly string[]): void {
    const ms = Math.max(0, Math.min(expiresInMs, LINK_PROBE_CAPS.maxTokenMs));
    this.tokens.delete(token);
    const from = fromAddresses && fromAddresses.length > 0 ? new Set(fromAddresses.map(plainAddress)) : null;
    this.tokens.set(token, { fromNode, from, expiresAt: this.opts.now() + ms });
    while (this.tokens.size > this.opts.maxTokens) this.tokens.delete(this.tokens.keys().next().value!);
  }

  /** Tokens held now (expired ones are dropped first). */
  heldTokens(): number {
    const now = this.opts.now();
    for (const [t, v] of this.tokens) if (v.expiresAt <= now) this.tokens.delete(t);
    return this.tokens.size;
  }

  close(): Promise<void> {
    this.refusals.flush();
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Takes the token: true once for a token held, not expired, and presented from an address it names. */
  private take(token: string, address: string): { fromNode: string } | null {
    const held = this.tokens.get(token);
    if (!held || (held.from !== null && !held.from.has(address))) return null;
    this.tokens.delete(token);
    return held.expiresAt > this.opts.now() ? held : null;
  }

  /** Why a connection from `address` gets no slot, or null when it may present a token. */
  private admission(address: string): string | null {
    const now = this.opts.now();
    const expected = [...this.tokens.values()].some((t) => t.expiresAt > now && (t.from === null || t.from.has(address)));
    if (!expected) return 'no probe from this address was announced by the coordinator';
    if (this.busy.has(address)) return 'this address already holds a probe connection';
    if (this.sockets.size >= this.opts.maxConnections) return `all ${this.opts.maxConnections} probe slots are busy`;
    return null;
  }

  private serve(socket: Socket): void {
    const address = plainAddress(socket.remoteAddress ?? '?');
    const denied = this.admission(address);
    if (denied) {
      this.refused += 1;
      this.refusals.note(address, denied);
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    this.busy.add(address);
    socket.setNoDelay(true);
    const wall = setTimeout(() => socket.destroy(), this.opts.wallMs);
    const tokenWait = setTimeout(() => refuse('no token in time'), this.opts.tokenWaitMs);
    socket.on('close', () => {
      clearTimeout(wall);
      clearTimeout(tokenWait);
      this.sockets.delete(socket);
      this.busy.delete(address);
    });
    socket.on('error', () => socket.destroy());
    const refuse = (why: string) => {
      if (socket.destroyed) return;
      this.refused += 1;
      this.refusals.note(address, why);
      socket.destroy();
    };

    let mode: 'token' | 'command' | 'data' | 'done' = 'token';
    let pending = Buffer.alloc(0);
    let firstAt = 0;
    let lastAt = 0;
    let counted = 0;
    let pings = 0;
    let dataMs: number = this.opts.wallMs;
    const answer = () => {
      if (mode !== 'data') return;
      mode = 'done';
      socket.write(`GOT ${counted} ${(lastAt - firstAt).toFixed(3)}\n`);
      // Nothing more is read: what the sender still has in flight stays in its buffers until it closes.
      socket.pause();
      setTimeout(() => socket.destroy(), 2000).unref();
    };
    const onData = (chunk: Buffer) => {
      if (mode === 'done') return;
      const now = performance.now();
      if (firstAt === 0) firstAt = now;
      else counted += chunk.length;
      lastAt = now;
      if (counted >= this.opts.maxBytes || now - firstAt >= dataMs) answer();
    };
    socket.on('data', (chunk: Buffer) => {
      if (mode === 'data' || mode === 'done') return onData(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const nl = pending.indexOf(10);
        if (nl < 0) {
          if (pending.length > MAX_LINE) refuse('a line longer than a token');
          return;
        }
        const line = pending.subarray(0, nl).toString('latin1').trim();
        pending = pending.subarray(nl + 1);
        if (mode === 'token') {
          clearTimeout(tokenWait);
          const held = this.take(line, address);
          if (!held) return refuse('not a token it was told to expect (or expired, or used)');
          mode = 'command';
          socket.write('OK\n');
        } else if (line === 'PING') {
          if (++pings > MAX_PINGS) return refuse(`more than ${MAX_PINGS} pings`);
          socket.write('PONG\n');
        } else if (line.startsWith('DATA')) {
          const asked = Number(line.slice(4).trim());
          dataMs = Math.min(Number.isFinite(asked) && asked > 0 ? asked : LINK_PROBE_CAPS.maxMs, LINK_PROBE_CAPS.maxMs, this.opts.wallMs);
          mode = 'data';
          if (pending.length > 0) onData(pending);
          pending = Buffer.alloc(0);
          return;
        } else {
          return refuse(`unknown command "${line.slice(0, 20)}"`);
        }
      }
    });
    socket.on('end', () => {
      answer();
      socket.end();
    });
  }
}

/** An address as the coordinator names it: IPv4-mapped IPv6 ("::ffff:10.0.0.2") as plain IPv4. */
function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
