/**
 * Bounds on the sockets a listening port holds, so nobody can run the process out of descriptors without a
 * credential (issue 14, item 5): connections per source address are capped (counted on 'connection', released
 * on 'close'; over the cap the socket is destroyed at once), the whole port is capped well under the
 * process's descriptor limit, and a socket that is answered because it was too slow or malformed is destroyed
 * once the answer is written — not half-closed, which a client that never reads would keep open for ever.
 * Used by the coordinator port (coordinator-http.ts) and the page port (headless-server.ts).
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { addressKey, isLoopbackAddress } from './address-key';

export interface ConnectionLimits {
  /** Connections one source address (IPv6: one /64) may hold at once. */
  perAddress: number;
  /** The same for a loopback address (default: perAddress). */
  perLoopbackAddress?: number;
  /** Connections the port holds at once, all addresses together (default: defaultTotalConnections()). */
  total?: number;
}

export interface ConnectionGuard {
  /** Connections held now. */
  open(): number;
  /** Connections held now from `address`'s key. */
  from(address: string): number;
  /** Connections destroyed at once because a cap was reached. */
  refused(): number;
}

/**
 * The coordinator port's caps: 64 connections per address; 2,048 per loopback address (the app's own worker,
 * the CLI, the 1,000-worker bench — anyone there already holds the tokens); in all, defaultTotalConnections().
 */
export const COORDINATOR_CONNECTION_LIMITS: ConnectionLimits = { perAddress: 64, perLoopbackAddress: 2_048 };

/** The process's soft limit on open files (Linux: /proc/self/limits), or null where it cannot be read. */
export function descriptorLimit(): number | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line ? /^Max open files\s+(\d+|unlimited)/.exec(line)?.[1] : undefined;
    if (soft === undefined) return null;
    return soft === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(soft);
  } catch {
    return null;
  }
}

/**
 * A port's connection cap: half the descriptor limit (the rest stays for files, the database, child processes
 * and the other port), at least 256 and at most 16,384; 4,096 where the limit cannot be read.
 */
export function defaultTotalConnections(limit: number | null = descriptorLimit()): number {
  if (limit === null) return 4_096;
  return Math.max(256, Math.min(16_384, Math.floor(limit / 2)));
}

/** Caps `server`'s connections as `limits` says; call before it listens. */
export function guardConnections(server: net.Server, limits: ConnectionLimits): ConnectionGuard {
  const byAddress = new Map<string, number>();
  let open = 0;
  let refused = 0;
  // Node itself destroys a connection past maxConnections before anyone sees it.
  server.maxConnections = limits.total ?? defaultTotalConnections();
  server.on('drop', () => refused++);
  server.on('connection', (socket: net.Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) {
      socket.destroy(); // already gone
      return;
    }
    const key = addressKey(address);
    const cap = isLoopbackAddress(address) ? (limits.perLoopbackAddress ?? limits.perAddress) : limits.perAddress;
    const held = byAddress.get(key) ?? 0;
    if (held >= cap) {
      refused++;
      socket.destroy();
      return;
    }
    byAddress.set(key, held + 1);
    open++;
    socket.once('close', () => {
      open--;
      const left = (byAddress.get(key) ?? 1) - 1;
      if (left <= 0) byAddress.delete(key);
      else byAddress.set(key, left);
    });
  });
  return { open: () => open, from: (address) => byAddress.get(addressKey(address)) ?? 0, refused: () => refused };
}

/**
 * Writes a last answer and destroys the socket once it is handed to the system (or after `graceMs` if the
 * client is not reading and it cannot be): end() alone only half-closes, and the socket then lives as long as
 * the client keeps its side open.
 */
export function answerAndDestroy(socket: Duplex, text: string, graceMs = 1_000): void {
  if (socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const timer = setTimeout(() => socket.destroy(), graceMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.end(text, () => socket.destroy());
}

/**
 * Answers bytes Node cannot parse as HTTP (400) and headers or a request too slow (408), then destroys the
 * socket; a reset socket is destroyed without a word.
 */
export function answerClientErrors(server: http.Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
    answerAndDestroy(socket, `HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  });
}
