/**
 * A small coordinator that speaks src-shared/worker-protocol.ts over real HTTP on 127.0.0.1, for testing the
 * agent without the real coordinator service: it records what the agent sends, hands out queued
 * instructions, and can be told to fail (5xx, 409, drop connections) the way a real one might.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  heartbeatRequestSchema,
  joinRequestSchema,
  leaveRequestSchema,
  reportRequestSchema,
  type Instruction,
  type Report,
} from '../../../src-shared/worker-protocol';

export type FakeMode = 'ok' | 'error-503' | 'stale-409' | 'hang';

export interface JoinRecord {
  workerId: number;
  incarnation: number;
  body: ReturnType<typeof joinRequestSchema.parse>;
  remoteAddress: string | null;
}

export class FakeCoordinator {
  readonly joins: JoinRecord[] = [];
  readonly heartbeats: { workerId: number; body: ReturnType<typeof heartbeatRequestSchema.parse> }[] = [];
  /** Reports taken, as the real coordinator takes them: a numbered batch already taken is not taken again. */
  readonly reports: { workerId: number; incarnation: number; report: Report }[] = [];
  /** Every report request that arrived, repeats included. */
  readonly batches: { incarnation: number; batchSeq: number | undefined; reports: Report[] }[] = [];
  /** This many report requests are taken and then answered with a dropped connection (an answer lost in transit). */
  loseReportAnswers = 0;
  private lastBatchSeq = new Map<number, number>();
  readonly leaves: { workerId: number; incarnation: number; reason: string }[] = [];
  /** Raw instruction objects (possibly invalid) handed out with the next heartbeat. */
  pending: unknown[] = [];
  mode: FakeMode = 'ok';
  /** Sent as heartbeatTimeoutMs in heartbeat answers when set. */
  heartbeatTimeoutInReplies: number | null = null;
  /**
   * Numbered instructions, as the real coordinator hands them to an agent that acknowledges: each one is
   * sent again with every answer until a heartbeat's ack covers it.
   */
  numbered = false;
  private firstSeq = 1;
  /** Set to make joins fail with this status. */
  joinStatus: number | null = null;
  private server: http.Server;
  private incarnation = 0;
  private hung: http.ServerResponse[] = [];

  constructor(
    readonly token: string,
    readonly heartbeatIntervalMs = 50,
    readonly heartbeatTimeoutMs = 500,
  ) {
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  give(instruction: Instruction | unknown): void {
    this.pending.push(instruction);
  }

  reportsOf<T extends Report['type']>(type: T): Extract<Report, { type: T }>[] {
    return this.reports.map((r) => r.report).filter((r): r is Extract<Report, { type: T }> => r.type === type);
  }

  output(): string {
    return this.reportsOf('output').map((r) => r.data).join('');
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${this.token}`) return send(401, { error: 'missing or wrong join token' });
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(400, { error: 'body is not JSON' });
    }
    const url = req.url ?? '';
    if (url === '/v1/join') {
      if (this.joinStatus !== null) return send(this.joinStatus, { error: `join refused with ${this.joinStatus}` });
      const parsed = joinRequestSchema.safeParse(body);
      if (!parsed.success) return send(400, { error: parsed.error.message });
      this.incarnation += 1;
      const record: JoinRecord = { workerId: 7, incarnation: this.incarnation, body: parsed.data, remoteAddress: req.socket.remoteAddress ?? null };
      this.joins.push(record);
      if (this.mode !== 'ok') this.mode = 'ok';
      return send(200, {
        workerId: record.workerId,
        incarnation: record.incarnation,
        heartbeatIntervalMs: this.heartbeatIntervalMs,
        heartbeatTimeoutMs: this.heartbeatTimeoutMs,
      });
    }
    const m = /^\/v1\/workers\/(\d+)\/(heartbeat|report|leave)$/.exec(url);
    if (!m) return send(404, { error: `no route ${url}` });
    const workerId = Number(m[1]);
    const what = m[2];
    if (what === 'heartbeat') {
      if (this.mode === 'hang') {
        this.hung.push(res);
        return;
      }
      if (this.mode === 'error-503') return send(503, { error: 'coordinator overloaded' });
      if (this.mode === 'stale-409') return send(409, { error: `stale heartbeat: worker ${workerId} was declared failed; join again` });
      const parsed = heartbeatRequestSchema.safeParse(body);
      if (!parsed.success) return send(400, { error: parsed.error.message });
      this.heartbeats.push({ workerId, body: parsed.data });
      let reply: Record<string, unknown>;
      if (this.numbered) {
        const acked = Math.max(0, Math.min(this.pending.length, (parsed.data.ack ?? 0) - this.firstSeq + 1));
        this.pending.splice(0, acked);
        this.firstSeq += acked;
        reply = { instructions: this.pending.slice(), firstSeq: this.firstSeq };
      } else {
        reply = { instructions: this.pending.splice(0) };
      }
      if (this.heartbeatTimeoutInReplies !== null) reply.heartbeatTimeoutMs = this.heartbeatTimeoutInReplies;
      return send(200, reply);
    }
    if (what === 'report') {
      const parsed = reportRequestSchema.safeParse(body);
      if (!parsed.success) return send(400, { error: parsed.error.message });
      if (this.mode === 'stale-409') return send(409, { error: 'stale report' });
      const { incarnation, batchSeq, reports } = parsed.data;
      this.batches.push({ incarnation, batchSeq, reports });
      if (batchSeq === undefined || batchSeq > (this.lastBatchSeq.get(incarnation) ?? 0)) {
        for (const report of reports) this.reports.push({ workerId, incarnation, report });
        if (batchSeq !== undefined) this.lastBatchSeq.set(incarnation, batchSeq);
      }
      if (this.loseReportAnswers > 0) {
        this.loseReportAnswers -= 1;
        res.destroy();
        return;
      }
      return send(200, { ok: true });
    }
    const parsed = leaveRequestSchema.safeParse(body);
    if (!parsed.success) return send(400, { error: parsed.error.message });
    this.leaves.push({ workerId, incarnation: parsed.data.incarnation, reason: parsed.data.reason });
    return send(200, { ok: true });
  }
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes; the message says what was awaited. */
export async function waitFor<T>(what: string, check: () => T | undefined | null | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * True while a process with this pid runs. Signal 0 probes without sending anything; a zombie (dead, not yet
 * reaped, which happens to orphans in containers whose init does not reap) counts as gone.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}
