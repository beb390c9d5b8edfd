/**
 * A small coordinator that speaks src-shared/worker-protocol.ts over real HTTP on 127.0.0.1, for testing the
 * agent without the real coordinator service: it records what the agent sends, hands out queued
 * instructions, and can be told to fail (5xx, 409, drop connections) the way a real one might. Like the real
 * one it hands out a session secret at join, wants it on every later request, and keeps presence WebSockets.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  JOIN_CHALLENGE_HEADER,
  JOIN_PROOF_HEADER,
  SESSION_HEADER,
  heartbeatRequestSchema,
  joinChallengeRequestSchema,
  joinRequestSchema,
  leaveRequestSchema,
  reportRequestSchema,
  type Instruction,
  type Report,
} from '../../../src-shared/worker-protocol';
import { JoinChallenges } from '../../../src-main/core/api/join-challenges';
import { fingerprintOf } from '../../../src-main/platform/tls-identity';
import { CLAIM_TOKEN_HEADER, jobCompleteSchema, jobFailSchema, jobOutputSchema, jobStartedSchema } from '../../../src-shared/jobs/job-protocol';

export type JobAction = 'started' | 'output' | 'complete' | 'fail';
const jobBodySchemas = { started: jobStartedSchema, output: jobOutputSchema, complete: jobCompleteSchema, fail: jobFailSchema } as const;

/** An artifact upload as the fake took it: the bytes' real hash next to the one in the path. */
export interface UploadRecord {
  jobId: string;
  pathSha256: string;
  bytesSha256: string;
  sizeBytes: number;
  token: string | undefined;
  contentLength: string | undefined;
  bytes: Buffer;
}

export type FakeMode = 'ok' | 'error-503' | 'stale-409' | 'hang' | 'html-200';

/** One presence WebSocket as the fake saw it. */
export interface PresenceRecord {
  workerId: number;
  session: string;
  socket: WebSocket;
  /** Close code the agent sent (null while open; 1005/1006 when it sent none). */
  closeCode: number | null;
  closeReason: string;
}

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
  /**
   * Failover (docs/api.md): with an epoch the fake says it in join answers and refusals, and offers this failover
   * grace; restart() then acts as a coordinator that came back under a new epoch and forgot every session.
   */
  epoch: string | null = null;
  failoverGraceMs = 0;
  /** How a restarted fake answers a join's re-attach claim: take it back (same incarnation) or refuse it. */
  reattachVerdict: 'accept' | 'refuse' = 'accept';
  /** Set to make joins fail with this status. */
  joinStatus: number | null = null;
  /** Set to answer joins 202 awaiting-approval (the key is not approved), as often as they come. */
  awaitingApproval = false;
  /** Joins answered 202 so far. */
  awaitingAnswers = 0;
  /** Joins answered with 503 before the fake starts accepting them. */
  failJoins = 0;
  /** Every session secret handed out; the latest is the valid one. */
  readonly sessions: string[] = [];
  readonly presence: PresenceRecord[] = [];
  /** Requests refused for a missing or wrong session secret. */
  sessionRefusals = 0;
  /** Every request in arrival order, as "METHOD path", presence upgrades included. */
  readonly requestLog: string[] = [];
  /** Every job call that arrived (after auth), in order; answered from jobStatuses or 200. */
  readonly jobCalls: { action: JobAction; jobId: string; body: Record<string, unknown>; status: number }[] = [];
  readonly uploads: UploadRecord[] = [];
  /** Statuses to answer the next calls of each action with (then 200): e.g. { complete: [503] }. */
  jobStatuses: Partial<Record<JobAction | 'upload', number[]>> = {};
  /** Every raw request as it arrived: headers and body text (to assert what a worker never sends). */
  readonly rawRequests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  /** Answer challenges with a proof that does not match (as a server without the token would). */
  forgeProof = false;
  /** This many joins find their challenge gone (evicted by a flood, or expired) and get the coordinator's 401. */
  loseChallenges = 0;
  private challenges: JoinChallenges;
  private server: http.Server | https.Server;
  private wss = new WebSocketServer({ noServer: true });
  private incarnation = 0;
  private hung: http.ServerResponse[] = [];

  constructor(
    readonly token: string,
    readonly heartbeatIntervalMs = 100,
    readonly heartbeatTimeoutMs = 500,
    /** Serve https with this certificate (as a coordinator does beyond loopback). */
    private readonly tls?: { certPem: string; keyPem: string },
  ) {
    this.challenges = new JoinChallenges({ now: () => Date.now(), tokens: () => ({ current: token, retired: [] }), certSha256: tls ? fingerprintOf(tls.certPem) : null });
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void this.handle(req, res);
    this.server = tls ? https.createServer({ cert: tls.certPem, key: tls.keyPem }, handler) : http.createServer(handler);
    this.server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
  }

  /** The secret of the current session, which later requests must carry. */
  get session(): string | undefined {
    return this.sessions[this.sessions.length - 1];
  }

  private upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    this.requestLog.push(`UPGRADE ${req.url}`);
    const m = /^\/v1\/workers\/(\d+)\/presence$/.exec(req.url ?? '');
    const session = req.headers[SESSION_HEADER];
    if (!m || req.headers.authorization !== undefined || typeof session !== 'string' || session !== this.session) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const record: PresenceRecord = { workerId: Number(m[1]), session, socket: ws, closeCode: null, closeReason: '' };
      this.presence.push(record);
      ws.on('close', (code, reason) => {
        this.requestLog.push(`PRESENCE-CLOSE ${code}`);
        record.closeCode = code;
        record.closeReason = reason.toString('utf8');
      });
      ws.on('error', () => undefined);
    });
  }

  /** Proves the token over another certificate's fingerprint: a relay in front of the coordinator that holds it. */
  proveAsCertificate(certSha256: string): void {
    this.challenges = new JoinChallenges({ now: () => Date.now(), tokens: () => ({ current: this.token, retired: [] }), certSha256 });
  }

  /** Presence sockets open now. */
  openPresence(): PresenceRecord[] {
    return this.presence.filter((p) => p.closeCode === null);
  }

  async listen(port = 0): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    return `${this.tls ? 'https' : 'http'}://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    for (const p of this.presence) p.socket.terminate();
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

  /** Job calls of one action (answered with 2xx unless `all`). */
  jobCallsOf(action: JobAction, all = false): Record<string, unknown>[] {
    return this.jobCalls.filter((c) => c.action === action && (all || c.status < 300)).map((c) => c.body);
  }

  /** All output of one job, as taken. */
  jobOutput(jobId: string): string {
    return this.jobCalls.filter((c) => c.action === 'output' && c.jobId === jobId && c.status < 300).map((c) => String(c.body.data)).join('');
  }

  /** Ends the current session as a coordinator restart would: every request with its secret gets 401 until a join. */
  forgetSession(): void {
    this.sessions.push(randomBytes(24).toString('base64url'));
  }

  private nextJobStatus(action: JobAction | 'upload'): number {
    return this.jobStatuses[action]?.shift() ?? (action === 'upload' ? 201 : 200);
  }

  private takeUpload(req: http.IncomingMessage, m: RegExpExecArray, raw: Buffer, send: (status: number, body: unknown) => void): void {
    const token = req.headers[CLAIM_TOKEN_HEADER];
    const record: UploadRecord = {
      jobId: m[2]!,
      pathSha256: m[3]!,
      bytesSha256: createHash('sha256').update(raw).digest('hex'),
      sizeBytes: raw.length,
      token: typeof token === 'string' ? token : undefined,
      contentLength: req.headers['content-length'],
      bytes: raw,
    };
    const status = this.nextJobStatus('upload');
    if (status >= 300) return send(status, { error: `upload answered with ${status}` });
    if (record.bytesSha256 !== record.pathSha256) return send(400, { error: 'the bytes do not hash to the sha256 in the path' });
    this.uploads.push(record);
    return send(201, { sha256: record.bytesSha256, sizeBytes: record.sizeBytes, stored: 'new' });
  }

  /** The heartbeats held by mode 'hang' are answered now, as a restarted coordinator would (401 under its epoch). */
  answerHungAsRestarted(): void {
    this.restart();
    this.mode = 'ok';
    for (const res of this.hung.splice(0)) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'unknown session', epoch: this.epoch }));
    }
  }

  /** The coordinator came back under a new epoch: every session is forgotten (requests get 401 with the epoch). */
  restart(): void {
    this.epoch = randomBytes(12).toString('base64url');
    this.sessions.push(`forgotten-${randomBytes(12).toString('base64url')}`);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      const withEpoch = status >= 400 && this.epoch && body && typeof body === 'object' ? { ...body, epoch: this.epoch } : body;
      res.end(JSON.stringify(withEpoch));
    };
    this.requestLog.push(`${req.method} ${req.url}`);
    this.rawRequests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    // The join token never crosses the wire: a request that carries any Authorization header is a bug in the agent.
    if (req.headers.authorization !== undefined) return send(400, { error: 'a worker request carried an Authorization header' });
    const upload = /^\/v1\/workers\/(\d+)\/jobs\/([0-9a-f]{64})\/artifact\/([^/]+)$/.exec(req.url ?? '');
    if (upload && req.method === 'PUT') {
      if (req.headers[SESSION_HEADER] !== this.session) return send(401, { error: 'missing or wrong session secret' });
      return this.takeUpload(req, upload, Buffer.concat(chunks), send);
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(400, { error: 'body is not JSON' });
    }
    const url = req.url ?? '';
    if (url === '/v1/join/challenge') {
      const parsed = joinChallengeRequestSchema.safeParse(body);
      if (!parsed.success) return send(400, { error: parsed.error.message });
      try {
        const answer = this.challenges.issue(parsed.data);
        return send(200, this.forgeProof ? { ...answer, proof: randomBytes(32).toString('base64url') } : answer);
      } catch (error) {
        return send(401, { error: (error as Error).message });
      }
    }
    if (url === '/v1/join') {
      if (this.loseChallenges > 0) {
        this.loseChallenges -= 1;
        return send(401, { error: 'unknown, expired or already used join challenge: ask for a new one (POST /v1/join/challenge) and join within 30 s' });
      }
      try {
        const proved = this.challenges.prove(String(req.headers[JOIN_CHALLENGE_HEADER] ?? ''), String(req.headers[JOIN_PROOF_HEADER] ?? ''));
        if ((body as { publicKey?: string }).publicKey !== (proved.nodePublicKey ?? undefined)) return send(401, { error: 'the join presents another key than its challenge' });
      } catch (error) {
        return send(401, { error: (error as Error).message });
      }
      if (this.joinStatus !== null) return send(this.joinStatus, { error: `join refused with ${this.joinStatus}` });
      if (this.awaitingApproval) {
        this.awaitingAnswers += 1;
        const key = Buffer.from(String((body as { publicKey?: string }).publicKey ?? ''), 'base64url');
        const fingerprint = `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
        return send(202, { status: 'awaiting-approval', node: (body as { node?: string }).node, fingerprint, retryAfterMs: 10 });
      }
      if (this.failJoins > 0) {
        this.failJoins -= 1;
        return send(503, { error: 'coordinator starting' });
      }
      const parsed = joinRequestSchema.safeParse(body);
      if (!parsed.success) return send(400, { error: parsed.error.message });
      const claim = parsed.data.reattach;
      // As the real one: only a coordinator that restarted (another epoch than the claim's) takes a worker back.
      const takeBack = claim !== undefined && this.reattachVerdict === 'accept' && claim.epoch !== this.epoch && claim.incarnation === this.incarnation;
      if (takeBack) this.lastBatchSeq.delete(this.incarnation); // a new session numbers its batches from 1
      else this.incarnation += 1;
      const record: JoinRecord = { workerId: 7, incarnation: this.incarnation, body: parsed.data, remoteAddress: req.socket.remoteAddress ?? null };
      this.joins.push(record);
      if (this.mode !== 'ok') this.mode = 'ok';
      this.sessions.push(randomBytes(24).toString('base64url'));
      return send(200, {
        workerId: record.workerId,
        incarnation: record.incarnation,
        heartbeatIntervalMs: this.heartbeatIntervalMs,
        heartbeatTimeoutMs: this.heartbeatTimeoutMs,
        sessionSecret: this.session,
        ...(this.epoch ? { epoch: this.epoch, failoverGraceMs: this.failoverGraceMs } : {}),
        ...(claim ? { reattach: takeBack ? { accepted: true } : { accepted: false, reason: 'the fake refuses re-attach claims' } } : {}),
      });
    }
    if (req.headers[SESSION_HEADER] !== this.session) {
      this.sessionRefusals += 1;
      return send(401, { error: 'missing or wrong session secret' });
    }
    const job = /^\/v1\/workers\/(\d+)\/jobs\/([0-9a-f]{64})\/(started|output|complete|fail)$/.exec(url);
    if (job) {
      const action = job[3] as JobAction;
      const parsed = jobBodySchemas[action].safeParse(body);
      if (!parsed.success) return send(400, { error: parsed.error.message });
      const status = this.nextJobStatus(action);
      this.jobCalls.push({ action, jobId: job[2]!, body: parsed.data as Record<string, unknown>, status });
      return status < 300 ? send(status, { ok: true, status: action === 'complete' ? 'completed' : action === 'fail' ? 'failed' : 'running' }) : send(status, { error: `${action} answered with ${status}` });
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
      if (this.mode === 'html-200') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>captive portal</html>');
        return;
      }
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
/** SIGKILLs the process groups a test started (and empties the list); one already gone is fine. */
export function killGroups(pids: number[]): void {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone, as it should be
    }
  }
}

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
