/**
 * The sending side of a link probe (issue 16, item 1): on the coordinator's `measure-links`, the agent dials each
 * target's probe server in turn (one at a time, so probes do not disturb each other) at the address training
 * publishes for it, shows the token, takes the least of a few ping round trips, and sends a bounded, timed stream
 * of bytes (link-probe-server.ts answers how many arrived and over how long). A target that cannot be reached or
 * measured gets its error in words ("beta 10.0.0.3:41234: connection refused") instead of a number.
 */
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { LinkProbeResult, LinkProbeTarget, MeasureLinksInstruction } from '../../src-shared/links/link-probe-protocol';

export interface LinkProbeClientOptions {
  /** How long to keep dialling a target that refuses (its accept instruction may not have arrived yet). */
  connectRetryMs?: number;
  /** Pings per target; the least round trip counts. */
  pings?: number;
}

const CHUNK = Buffer.alloc(64 * 1024, 0x5a);

/** Measures every target of one instruction, one after another. */
export async function measureLinks(instruction: Pick<MeasureLinksInstruction, 'targets' | 'maxBytes' | 'maxMs'>, opts: LinkProbeClientOptions = {}): Promise<LinkProbeResult[]> {
  const results: LinkProbeResult[] = [];
  for (const target of instruction.targets) {
    try {
      const { mbps, rttMs } = await probeOne(target, instruction.maxBytes, instruction.maxMs, opts);
      results.push({ toId: target.workerId, mbps, rttMs });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      results.push({ toId: target.workerId, mbps: null, rttMs: null, error: `${target.node} ${hostPort(target)}: ${why}`.slice(0, 500) });
    }
  }
  return results;
}

function hostPort(t: Pick<LinkProbeTarget, 'host' | 'port'>): string {
  return t.host.includes(':') ? `[${t.host}]:${t.port}` : `${t.host}:${t.port}`;
}

/** Words for a socket error a person can act on. */
function describe(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED': return 'connection refused (is its agent running, and its probe port open in the firewall?)';
    case 'ECONNRESET': return 'connection reset (it did not accept the token)';
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'host unreachable';
    case 'ETIMEDOUT': return 'connection timed out';
    default: return error.message;
  }
}

/** Lines and errors of one probe connection, read as promises. */
class ProbeConnection {
  private buffer = '';
  private waiting: { resolve: (line: string) => void; reject: (e: Error) => void } | null = null;
  private failure: Error | null = null;

  constructor(readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => {
      this.buffer += d.toString('latin1');
      if (this.buffer.length > 4096) this.fail(new Error('it sent more than a probe answer'));
      this.deliver();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => this.fail(new Error(describe(e))));
    socket.on('close', () => this.fail(new Error('it closed the connection (it did not accept the token, or the probe ran past its bounds)')));
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.waiting?.reject(this.failure);
    this.waiting = null;
    this.socket.destroy();
  }

  private deliver(): void {
    const nl = this.buffer.indexOf('\n');
    if (nl < 0 || !this.waiting) return;
    const line = this.buffer.slice(0, nl).trim();
    this.buffer = this.buffer.slice(nl + 1);
    const w = this.waiting;
    this.waiting = null;
    w.resolve(line);
  }

  /** The next line, or the connection's failure; rejects after `ms`. */
  line(ms: number, what: string): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      const timer = setTimeout(() => {
        this.waiting = null;
        reject(new Error(`no answer to ${what} within ${ms} ms`));
      }, ms);
      this.waiting = {
        resolve: (l) => { clearTimeout(timer); resolve(l); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      };
      this.deliver();
    });
  }

  get failed(): boolean {
    return this.failure !== null;
  }
}

function dial(host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(Object.assign(new Error('connection timed out'), { code: 'ETIMEDOUT' }));
    }, timeoutMs);
    socket.once('connect', () => { clearTimeout(timer); resolve(socket); });
    socket.once('error', (e) => { clearTimeout(timer); reject(e); });
  });
}

/** Dials, retrying a refused connection for up to connectRetryMs; shows the token and waits for "OK". */
async function open(target: LinkProbeTarget, opts: LinkProbeClientOptions): Promise<ProbeConnection> {
  const until = performance.now() + (opts.connectRetryMs ?? 3000);
  for (;;) {
    try {
      const socket = await dial(target.host, target.port, 3000);
      const conn = new ProbeConnection(socket);
      socket.write(`${target.token}\n`);
      const ok = await conn.line(3000, 'the token');
      if (ok !== 'OK') throw new Error(`it answered "${ok.slice(0, 40)}" to the token`);
      return conn;
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      // Refused, or closed on the token: its accept instruction may still be on the way.
      if (performance.now() >= until) throw e.code ? new Error(describe(e)) : e;
      await new Promise((r) => setTimeout(r, 150));
    }
  }
}

async function probeOne(target: LinkProbeTarget, maxBytes: number, maxMs: number, opts: LinkProbeClientOptions): Promise<{ mbps: number; rttMs: number }> {
  const conn = await open(target, opts);
  try {
    let rttMs = Infinity;
    for (let i = 0; i < (opts.pings ?? 5); i++) {
      const t0 = performance.now();
      conn.socket.write('PING\n');
      const pong = await conn.line(2000, 'a ping');
      if (pong !== 'PONG') throw new Error(`it answered "${pong.slice(0, 40)}" to a ping`);
      rttMs = Math.min(rttMs, performance.now() - t0);
    }
    conn.socket.write(`DATA ${maxMs}\n`);
    const got = conn.line(maxMs * 2 + 5000, 'the transfer');
    let stop = false;
    void got.then(() => { stop = true; }, () => { stop = true; });
    const start = performance.now();
    let sent = 0;
    while (!stop && !conn.failed && sent < maxBytes && performance.now() - start < maxMs) {
      const n = Math.min(CHUNK.length, maxBytes - sent);
      sent += n;
      if (!conn.socket.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) {
        await new Promise<void>((r) => {
          const done = () => { clearInterval(poll); r(); };
          conn.socket.once('drain', done);
          // Wake up to notice the answer or the time cap while the kernel's buffers are full.
          const poll = setInterval(() => { if (stop || conn.failed || performance.now() - start >= maxMs) { conn.socket.off('drain', done); done(); } }, 20);
        });
      }
    }
    conn.socket.end();
    const answer = await got;
    const m = /^GOT (\d+) ([\d.]+)$/.exec(answer);
    if (!m) throw new Error(`it answered "${answer.slice(0, 40)}" to the transfer`);
    const bytes = Number(m[1]);
    const ms = Number(m[2]);
    if (bytes < 16 * 1024 || ms <= 0) throw new Error(`too little arrived to measure (${bytes} bytes in ${ms} ms)`);
    return { mbps: Math.min(1e7, (bytes * 8) / (ms * 1000)), rttMs: Math.round(rttMs * 1000) / 1000 };
  } finally {
    conn.socket.destroy();
  }
}
