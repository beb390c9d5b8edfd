/**
 * A TCP proxy that makes a link poor on purpose: every chunk waits a random 0..maxDelayMs (order kept), now
 * and then a direction stalls for stallMs, and now and then a connection is dropped. Faults are TCP-level,
 * so TLS and WebSocket traffic pass through untouched, and the endpoints see what a bad network does:
 *
 * - A dropped connection is RESET on both sides (resetAndDestroy), never closed with an orderly FIN: a
 *   network that loses a connection delivers a reset or silence. The coordinator reads an orderly FIN without
 *   a WebSocket close frame as "that agent's process died" (fast failure detection), so a FIN here would
 *   fake a crash instead of network trouble.
 * - An orderly FIN from one side is passed on as a FIN, after the data queued before it; a reset from one
 *   side is passed on as a reset at once.
 *
 * Used in-process for its unit test on loopback and, bundled, as a process inside a namespace host (see
 * fault-proxy-main.ts), so it only ever listens on an address of the hosts, never on the machine's own.
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';

export interface FaultPlan {
  /** Each chunk waits a uniformly random 0..maxDelayMs before it is passed on. */
  maxDelayMs: number;
  /** How long a stall holds one direction of one connection. */
  stallMs: number;
  /** Chance per chunk that a stall starts before it. */
  stallChance: number;
  /** A stall at least this often (ms, over the whole proxy) so a short test still sees one; 0 = only by chance. */
  stallEveryMs: number;
  /** Chance per chunk that its connection is dropped (reset on both sides) instead. */
  dropChance: number;
  /** A drop at least this often (ms, over the whole proxy); 0 = only by chance. */
  dropEveryMs: number;
  /** Seed of the fault dice, printed so a failing run can be replayed. */
  seed: number;
}

export const NO_FAULTS: FaultPlan = { maxDelayMs: 0, stallMs: 0, stallChance: 0, stallEveryMs: 0, dropChance: 0, dropEveryMs: 0, seed: 1 };

export type Endpoint = { host: string; port: number } | { path: string };

export interface ProxyStats {
  connections: number;
  chunks: number;
  bytes: number;
  stalls: number;
  drops: number;
  /** Resets that came from an endpoint and were passed on. */
  resetsPassed: number;
  finsPassed: number;
}

export interface FaultEvent {
  kind: 'stall' | 'drop';
  conn: number;
  direction: 'up' | 'down';
}

/** mulberry32: small, seeded, good enough for fault dice. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Resets a TCP socket (RST, not FIN); a pipe has no reset, so it is destroyed. */
function reset(socket: net.Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

/** One direction of one connection: a FIFO released on time, so a delayed chunk never overtakes an earlier one. */
class Lane {
  private readonly queue: { at: number; data: Buffer | null }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private lastAt = 0;

  constructor(
    private readonly dst: net.Socket,
    private readonly onFin: () => void,
  ) {}

  /** Queues a chunk (null = the source's FIN) to leave `delayMs` from now, but never before the one ahead. */
  push(data: Buffer | null, delayMs: number): void {
    this.lastAt = Math.max(Date.now() + delayMs, this.lastAt);
    this.queue.push({ at: this.lastAt, data });
    if (!this.timer) this.pump();
  }

  private pump(): void {
    this.timer = null;
    while (this.queue.length > 0 && this.queue[0]!.at <= Date.now()) {
      const { data } = this.queue.shift()!;
      if (this.dst.destroyed) continue;
      if (data === null) {
        this.dst.end();
        this.onFin();
      } else {
        this.dst.write(data);
      }
    }
    if (this.queue.length > 0) this.timer = setTimeout(() => this.pump(), Math.max(0, this.queue[0]!.at - Date.now()));
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
  }
}

export class FaultProxy extends EventEmitter {
  readonly stats: ProxyStats = { connections: 0, chunks: 0, bytes: 0, stalls: 0, drops: 0, resetsPassed: 0, finsPassed: 0 };
  private readonly random: () => number;
  private lastStall = Date.now();
  private lastDrop = Date.now();
  private readonly open = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    private readonly target: Endpoint,
    readonly plan: FaultPlan,
  ) {
    super();
    this.random = seededRandom(plan.seed);
    server.on('connection', (client) => this.handle(client));
  }

  static async listen(listen: Endpoint, target: Endpoint, plan: FaultPlan = NO_FAULTS): Promise<FaultProxy> {
    const server = net.createServer({ allowHalfOpen: true });
    const proxy = new FaultProxy(server, target, plan);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen('path' in listen ? { path: listen.path } : { host: listen.host, port: listen.port }, () => resolve());
    });
    return proxy;
  }

  /** Where it listens: "host:port" or the socket path. */
  get address(): string {
    const a = this.server.address();
    return typeof a === 'string' ? a : `${a!.address}:${a!.port}`;
  }

  get port(): number {
    const a = this.server.address();
    return typeof a === 'object' && a ? a.port : 0;
  }

  private handle(client: net.Socket): void {
    const conn = ++this.stats.connections;
    const upstream = net.connect({ ...this.target, allowHalfOpen: true } as net.NetConnectOpts);
    this.open.add(client).add(upstream);
    let dropped = false;
    const up = new Lane(upstream, () => this.stats.finsPassed++);
    const down = new Lane(client, () => this.stats.finsPassed++);
    const drop = (direction: 'up' | 'down') => {
      dropped = true;
      this.stats.drops++;
      this.lastDrop = Date.now();
      up.clear();
      down.clear();
      reset(client);
      reset(upstream);
      this.emit('fault', { kind: 'drop', conn, direction } satisfies FaultEvent);
    };
    const wire = (src: net.Socket, dst: net.Socket, lane: Lane, direction: 'up' | 'down') => {
      src.on('data', (data: Buffer) => {
        if (dropped) return;
        this.stats.chunks++;
        this.stats.bytes += data.length;
        const now = Date.now();
        if (this.roll(this.plan.dropChance, this.plan.dropEveryMs, this.lastDrop, now)) {
          drop(direction);
          return;
        }
        let delay = this.random() * this.plan.maxDelayMs;
        if (this.roll(this.plan.stallChance, this.plan.stallEveryMs, this.lastStall, now)) {
          this.stats.stalls++;
          this.lastStall = now;
          delay += this.plan.stallMs;
          this.emit('fault', { kind: 'stall', conn, direction } satisfies FaultEvent);
        }
        lane.push(data, delay);
      });
      src.on('end', () => {
        if (!dropped) lane.push(null, 0);
      });
      // An endpoint's reset (or any error) reaches the other side as a reset, right away.
      src.on('error', () => {
        if (dropped) return;
        dropped = true;
        this.stats.resetsPassed++;
        up.clear();
        down.clear();
        reset(dst);
      });
      src.on('close', () => {
        this.open.delete(src);
        // Closed without FIN or error on our side (destroyed): make sure the peer does not wait for ever.
        if (!dropped && src.readableEnded === false) {
          dropped = true;
          reset(dst);
        }
      });
    };
    wire(client, upstream, up, 'up');
    wire(upstream, client, down, 'down');
  }

  /** True when a fault is due: by chance, or because `everyMs` passed since the last one. */
  private roll(chance: number, everyMs: number, last: number, now: number): boolean {
    if (everyMs > 0 && now - last >= everyMs) return true;
    return chance > 0 && this.random() < chance;
  }

  /** Stops listening and resets whatever connections are still open. */
  async close(): Promise<void> {
    for (const s of this.open) reset(s);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
