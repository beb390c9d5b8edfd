/**
 * Bounds on the sockets a listening port holds, so nobody can run the process out of descriptors or memory
 * without a credential (issue 14, item 5; issue 26, item 4). Peers are of two kinds. Those served first
 * (loopback always; the coordinator adds its cluster's machines, the page port the browsers that showed its
 * token) have a cap per address and may use the whole port. Strangers have a cap per address, per network
 * (IPv4 /24, IPv6 /64: one machine can hold many addresses of its LAN) and together at most a share of the
 * port, so the rest is always there for those served first. A stranger over a network or stranger cap still
 * gets in when some address holds more than it does: that address's oldest socket is closed for it, so a
 * browser opening its first sockets is not shut out by a neighbour holding hundreds. Over a cap the socket is
 * destroyed at once; a socket answered because it was too slow or malformed is destroyed once the answer is
 * written — not half-closed, which a client that never reads would keep open for ever. Used by the
 * coordinator port (coordinator-http.ts) and the page port (headless-server.ts).
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { addressKey, isLoopbackAddress, networkKey } from './address-key';

export interface ConnectionLimits {
  /** Connections one source address (IPv6: one /64) may hold at once. */
  perAddress: number;
  /** The same for a loopback address (default: perAddress). */
  perLoopbackAddress?: number;
  /** Connections the strangers of one network (IPv4 /24, IPv6 /64) may hold at once (default: 4 × perAddress). */
  perNetwork?: number;
  /** Connections the port holds at once, all addresses together (default: defaultTotalConnections()). */
  total?: number;
  /** The share of `total` strangers may hold together (default 0.75); the rest is kept for peers served first. */
  strangerShare?: number;
}

export interface ConnectionGuard {
  /** Connections held now. */
  open(): number;
  /** Connections held now from `address`'s key. */
  from(address: string): number;
  /** Connections destroyed at once because a cap was reached. */
  refused(): number;
  /** Strangers' connections closed to make room for an address holding fewer. */
  evicted(): number;
}

/**
 * The coordinator port's caps: 64 connections per address; 2,048 per loopback address (the app's own worker,
 * the CLI, the 1,000-worker bench — anyone there already holds the tokens); 256 for the strangers of one /24;
 * in all, defaultTotalConnections(), three quarters of which strangers may hold.
 */
export const COORDINATOR_CONNECTION_LIMITS: ConnectionLimits = { perAddress: 64, perLoopbackAddress: 2_048, perNetwork: 256 };

/** The page port's caps: a browser holds at most 6 per host besides its WebSocket, so 32 is room for several tabs. */
export const PAGE_CONNECTION_LIMITS: ConnectionLimits = { perAddress: 32, perNetwork: 128, total: 512 };

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

/** Caps `server`'s connections as `limits` says, serving `servedFirst` peers first; call before it listens. */
export function guardConnections(server: net.Server, limits: ConnectionLimits, servedFirst: (address: string) => boolean = isLoopbackAddress): ConnectionGuard {
  const total = limits.total ?? defaultTotalConnections();
  const strangerCap = Math.max(1, Math.floor(total * (limits.strangerShare ?? 0.75)));
  const perNetwork = limits.perNetwork ?? limits.perAddress * 4;
  const firstCounts = new Map<string, number>();
  const strangers = new StrangerSockets();
  let open = 0;
  let refused = 0;
  let evicted = 0;
  // Node itself destroys a connection past maxConnections before anyone sees it.
  server.maxConnections = total;
  server.on('drop', () => refused++);
  const refuse = (socket: net.Socket) => {
    refused++;
    socket.destroy();
  };
  server.on('connection', (socket: net.Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) {
      socket.destroy(); // already gone
      return;
    }
    const key = addressKey(address);
    if (servedFirst(address)) {
      const cap = isLoopbackAddress(address) ? (limits.perLoopbackAddress ?? limits.perAddress) : limits.perAddress;
      const held = firstCounts.get(key) ?? 0;
      if (held >= cap) return refuse(socket);
      firstCounts.set(key, held + 1);
      open++;
      socket.once('close', () => {
        open--;
        const left = (firstCounts.get(key) ?? 1) - 1;
        if (left <= 0) firstCounts.delete(key);
        else firstCounts.set(key, left);
      });
      return;
    }
    const network = networkKey(address);
    const mine = strangers.count(key);
    if (mine >= limits.perAddress) return refuse(socket);
    const caps = [() => (strangers.inNetwork(network) >= perNetwork ? strangers.addressesOf(network) : null), () => (strangers.size() >= strangerCap ? strangers.addresses() : null)];
    for (const full of caps) {
      const pool = full();
      if (!pool) continue;
      const victim = strangers.oldestOfHeaviest(pool, mine + 1);
      if (!victim) return refuse(socket);
      strangers.remove(victim);
      open--;
      evicted++;
      victim.destroy();
    }
    strangers.add(socket, key, network);
    open++;
    socket.once('close', () => {
      if (strangers.remove(socket)) open--;
    });
  });
  return { open: () => open, from: (address) => firstCounts.get(addressKey(address)) ?? strangers.count(addressKey(address)), refused: () => refused, evicted: () => evicted };
}

/** Strangers' sockets by address key (oldest first) and by network. */
class StrangerSockets {
  private readonly byAddress = new Map<string, Set<net.Socket>>();
  private readonly byNetwork = new Map<string, Set<string>>();
  private readonly keys = new Map<net.Socket, { key: string; network: string }>();
  private readonly networkCounts = new Map<string, number>();

  size(): number {
    return this.keys.size;
  }

  count(key: string): number {
    return this.byAddress.get(key)?.size ?? 0;
  }

  inNetwork(network: string): number {
    return this.networkCounts.get(network) ?? 0;
  }

  addressesOf(network: string): Iterable<string> {
    return this.byNetwork.get(network) ?? [];
  }

  addresses(): Iterable<string> {
    return this.byAddress.keys();
  }

  add(socket: net.Socket, key: string, network: string): void {
    this.keys.set(socket, { key, network });
    const own = this.byAddress.get(key) ?? new Set();
    own.add(socket);
    this.byAddress.set(key, own);
    this.byNetwork.set(network, (this.byNetwork.get(network) ?? new Set()).add(key));
    this.networkCounts.set(network, this.inNetwork(network) + 1);
  }

  /** Forgets `socket`; false when it was not held (already evicted). */
  remove(socket: net.Socket): boolean {
    const at = this.keys.get(socket);
    if (!at) return false;
    this.keys.delete(socket);
    const own = this.byAddress.get(at.key)!;
    own.delete(socket);
    if (own.size === 0) {
      this.byAddress.delete(at.key);
      this.byNetwork.get(at.network)?.delete(at.key);
      if (this.byNetwork.get(at.network)?.size === 0) this.byNetwork.delete(at.network);
    }
    const left = this.inNetwork(at.network) - 1;
    if (left <= 0) this.networkCounts.delete(at.network);
    else this.networkCounts.set(at.network, left);
    return true;
  }

  /** The oldest socket of the address in `pool` holding the most, if it holds more than `atLeast`. */
  oldestOfHeaviest(pool: Iterable<string>, atLeast: number): net.Socket | null {
    let heaviest: Set<net.Socket> | null = null;
    for (const key of pool) {
      const own = this.byAddress.get(key);
      if (own && own.size > (heaviest?.size ?? atLeast)) heaviest = own;
    }
    return heaviest ? (heaviest.values().next().value as net.Socket) : null;
  }
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
