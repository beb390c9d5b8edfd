/**
 * The coordinator's HTTP API (node:http, JSON), for worker agents and operators; docs/api.md describes every
 * endpoint. The server must outlive anything a client sends: every handler is wrapped, bodies are capped and
 * timed, and each refusal says what was wrong and what to do.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { RunSnapshot } from '../../../src-shared/training';
import type { ClusterHistory } from '../../../src-shared/cluster/cluster-history';
import { PROMETHEUS_CONTENT_TYPE, workerApi, type ApiAuth, type EndpointName, type HttpEndpointName, type WorkerApi } from '../../../src-shared/worker-api';
import { API_VERSION, SESSION_HEADER, type JoinRequest } from '../../../src-shared/worker-protocol';
import { ApiProblem, isApiProblem } from '../coordinator/common';
import type { CoordinatorService } from '../coordinator/service';
import { connectionFacts } from '../coordinator/membership';
import { labelRun } from '../coordinator/runs';
import type { JobsPort } from '../jobs/jobs-port';
import { runIdParam, workerIdParam, type BinaryDownload, type HandlerContext, type Handlers } from './api-handlers';
import { limitRequestTime, sendDownload } from './binary-transfer';
import { sha256Hex, signedPartsOf } from './request-signature';
import { jobHandlers } from './job-routes';
import { attachPresence } from './presence-server';
import { tokensEqual } from '../../platform/tokens';
import { answerClientErrors, COORDINATOR_CONNECTION_LIMITS, guardConnections, type ConnectionLimits } from '../../platform/net/connection-guard';
import { JoinRateLimit, type JoinRateLimitOptions } from './join-rate-limit';
import { JoinChallenges, type JoinTokens } from './join-challenges';
import { checkProvedJoin, proveJoin } from './join-auth';
import { fingerprintOf } from '../../platform/tls-identity';
import { projectHandlers, runProjectHandlers, type RunProjects } from './project-routes';
import { contentTypeProblem, MAX_BODY_BYTES, parseJsonBody, readBody } from './request-body';
import { PRE_AUTH_BODY_MS, PreAuthBodies, type PreAuthBodiesOptions } from './pre-auth-bodies';
import { servedFirstByCluster } from './served-first';

export { MAX_BODY_BYTES } from './request-body';

export interface CoordinatorHttpOptions {
  /** Interface to bind; 127.0.0.1 unless workers on other machines must reach it. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  joinToken: string;
  /** The join tokens now (current and retired), read at each challenge; without it, `joinToken` alone. */
  joinTokens?: () => JoinTokens;
  /** Makes, keeps and starts using a new join token (POST /v1/join-token/rotate); without it that answers 404. */
  rotateJoinToken?: () => Promise<string>;
  operatorToken: string;
  /** A body must arrive within this long (ms) once its headers have (default 10 s). */
  bodyTimeoutMs?: number;
  /** Request headers must arrive within this long (ms) of the connection's first byte (default 5 s). */
  headersTimeoutMs?: number;
  /**
   * Serve HTTPS with this certificate (whenever the coordinator listens beyond loopback, so the join token
   * never crosses a network in clear; agents pin the certificate's fingerprint).
   */
  tls?: { certPem: string; keyPem: string };
  /** See presence-server.ts (default 300 ms). */
  abruptCloseGraceMs?: number;
  /** The Prometheus text served at GET /metrics (operator token); without it /metrics answers 404. */
  metrics?: () => string;
  /** Every machine's resources over the last 24 h (GET /v1/cluster/history); without it that answers 404. */
  clusterHistory?: () => ClusterHistory;
  /** The adapter-job service behind the /v1/jobs, /v1/artifacts and worker job endpoints; without it they answer 404. */
  jobs?: JobsPort;
  /** Runs of a user's project: snapshots at start, the project and run-artifact endpoints; without it those answer 404. */
  projects?: RunProjects;
  /** Join requests per source address (join-rate-limit.ts; default 10 joins at once, 2 a second, loopback exempt). */
  joinRateLimit?: Omit<JoinRateLimitOptions, 'now'>;
  /** Connection caps (connection-guard.ts); see startCoordinatorHttp for the defaults. */
  connections?: ConnectionLimits;
  /** Bodies read before authentication (pre-auth-bodies.ts): deadline and budget. */
  preAuthBodies?: Omit<PreAuthBodiesOptions, 'servedFirst'>;
  /** Peers served first under the caps (default: loopback and the cluster's machines' addresses, served-first.ts). */
  servedFirst?: (address: string) => boolean;
}

export interface CoordinatorHttp {
  url: string;
  port: number;
  /** Agents holding a presence connection now. */
  presenceCount(): number;
  /** Connections the port holds now, and those it closed at once for being over a cap (connection-guard.ts). */
  openConnections(): number;
  refusedConnections(): number;
  close(): Promise<void>;
}

type Endpoint = WorkerApi[HttpEndpointName];

interface Route {
  name: HttpEndpointName;
  endpoint: Endpoint;
  handle(ctx: HandlerContext<HttpEndpointName>): unknown;
}

interface PathEntry {
  pattern: RegExp;
  routes: Route[];
}

function handlers(service: CoordinatorService, opts: CoordinatorHttpOptions, challenges: JoinChallenges): Handlers {
  const { metrics } = opts;
  const findRun = (raw: string): RunSnapshot => {
    const runId = runIdParam(raw);
    const run = service.runs().find((r) => r.id === runId);
    if (!run) throw new ApiProblem(404, `no run "${runId.slice(0, 200)}" (see GET /v1/runs for the runs this coordinator knows)`);
    return run;
  };
  const approvalState = () => ({ workers: service.workers(), awaiting: service.nodeKeys.awaitingList(), preApprovals: service.nodeKeys.preApprovals() });
  return {
    health: () => ({ status: 'ok', apiVersion: API_VERSION }),
    joinChallenge: ({ body }) => challenges.issue(body),
    rotateJoinToken: async () => {
      if (!opts.rotateJoinToken) throw new ApiProblem(404, 'this coordinator cannot replace its join token (it was started without a secrets file)');
      return { joinToken: await opts.rotateJoinToken() };
    },
    join: ({ body, conn }) => service.join(body, conn),
    heartbeat: ({ params, body }) => service.heartbeat(workerIdParam(params[0]!), body),
    report: ({ params, body }) => {
      service.report(workerIdParam(params[0]!), body);
      return { ok: true };
    },
    leave: ({ params, body }) => {
      service.leave(workerIdParam(params[0]!), body);
      return { ok: true };
    },
    drain: ({ params }) => ({ workers: service.drainWorker(workerIdParam(params[0]!)) }),
    forgetNode: ({ params }) => ({ workers: service.forgetNode(params[0]!.slice(0, 200)) }),
    // Node names need no URL encoding; an unknown one is a 404 in node-keys.ts.
    acceptNodeKey: ({ params, body }) => {
      service.nodeKeys.accept(params[0]!.slice(0, 200), body.fingerprint);
      return { workers: service.workers() };
    },
    approveNode: ({ params, body }) => {
      const outcome = service.nodeKeys.approve(params[0]!.slice(0, 200), body.fingerprint, body.publicKey);
      return { ...approvalState(), ...(outcome.kind === 'pre-approved' ? { message: outcome.message } : {}) };
    },
    revokeNode: ({ params }) => {
      service.nodeKeys.revoke(params[0]!.slice(0, 200));
      return approvalState();
    },
    state: () => ({ workers: service.workers(), runs: service.runs(), events: service.events(), awaiting: service.nodeKeys.awaitingList(), preApprovals: service.nodeKeys.preApprovals(), links: service.linkSurvey.links() }),
    measureLinks: async ({ body }) => ({ links: await service.linkSurvey.measureNow(body.workers) }),
    listRuns: () => ({ runs: service.runs() }),
    run: ({ params }) => findRun(params[0]!),
    runOutput: ({ params }) => {
      const run = findRun(params[0]!);
      return { runId: run.id, output: service.runOutput(run.id), times: service.runOutputTimes(run.id) };
    },
    runSeries: ({ params }) => service.runSeries(findRun(params[0]!).id),
    clusterHistory: () => {
      if (!opts.clusterHistory) throw new ApiProblem(404, 'this coordinator keeps no cluster history (it was started without it)');
      return opts.clusterHistory();
    },
    stopRun: ({ params }) => service.stopRun(runIdParam(params[0]!)),
    labelRun: ({ params, body }) => labelRun(service.runsCtl, runIdParam(params[0]!), body),
    deleteRun: ({ params }) => service.deleteRun(runIdParam(params[0]!)),
    metrics: () => {
      if (!metrics) throw new ApiProblem(404, 'this coordinator serves no metrics (it was started without them)');
      return metrics();
    },
    ...projectHandlers(opts.projects, { uploadIdleMs: opts.bodyTimeoutMs ?? 10_000 }),
    ...jobHandlers(opts.jobs, { uploadIdleMs: opts.bodyTimeoutMs ?? 10_000 }),
    ...runProjectHandlers(service, opts.projects, opts.jobs),
  };
}

/** The routes, grouped by path (several methods may share one), in the table's order. */
function buildRoutes(table: Handlers): PathEntry[] {
  const entries: PathEntry[] = [];
  for (const name of Object.keys(workerApi) as EndpointName[]) {
    const endpoint = workerApi[name];
    if (endpoint.transport === 'websocket') continue; // upgrades: presence-server.ts
    const handle = table[name as HttpEndpointName] as Route['handle'];
    let entry = entries.find((e) => e.pattern.source === endpoint.path.pattern.source);
    if (!entry) entries.push((entry = { pattern: endpoint.path.pattern, routes: [] }));
    entry.routes.push({ name: name as HttpEndpointName, endpoint: endpoint as Endpoint, handle });
  }
  return entries;
}

function sessionOf(req: http.IncomingMessage): string | null {
  const h = req.headers[SESSION_HEADER];
  return typeof h === 'string' && h.length <= 300 ? h : null;
}

function bearer(req: http.IncomingMessage): string | null {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1]! : null;
}

function sendText(res: http.ServerResponse, status: number, text: string, contentType: string, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...extraHeaders,
  });
  res.end(text);
}

function sendJson(res: http.ServerResponse, status: number, json: unknown, extraHeaders: Record<string, string> = {}): void {
  sendText(res, status, JSON.stringify(json), 'application/json; charset=utf-8', extraHeaders);
}

/** `epoch`: the coordinator's, on refusals of worker requests, so an agent tells a restarted coordinator from a refusal. */
function sendError(res: http.ServerResponse, status: number, message: string, extraHeaders: Record<string, string> = {}, epoch?: string): void {
  sendJson(res, status, epoch ? { error: message, epoch } : { error: message }, extraHeaders);
}

/** Whether a request may use an endpoint of this kind of auth: null when it may, else why not. */
function authorizer(operatorToken: string, joinTokens: () => JoinTokens): (req: http.IncomingMessage, auth: ApiAuth) => string | null {
  return (req, auth) => {
    // The join proves the token by its challenge (proveJoin); later worker requests by their session secret and
    // node signature: no worker request carries the join token itself.
    if (auth === 'none' || auth === 'join-proof' || auth === 'session') return null;
    const token = bearer(req);
    if (token === null) return 'missing bearer token: send "Authorization: Bearer <token>"';
    if (tokensEqual(token, operatorToken)) return null;
    if (tokensEqual(token, joinTokens().current)) return 'wrong token: this is an operator action and the join token only lets workers join; use the operator token';
    return 'wrong token';
  };
}

/** What answering one request needs: the service, the routes, the body readers, the join's guards and the deadlines. */
interface RequestContext {
  service: CoordinatorService;
  entries: PathEntry[];
  preAuth: PreAuthBodies;
  joinLimit: JoinRateLimit;
  joinTokens: () => JoinTokens;
  challenges: JoinChallenges;
  authorize: (req: http.IncomingMessage, auth: ApiAuth) => string | null;
  bodyTimeoutMs: number;
  requestTimeoutMs: number;
}

/**
 * One request: its route and method, its auth (token, join proof or session), its body read and checked, the
 * node's signature and key, then the route's handler and the answer in the endpoint's transport.
 */
function requestHandler(ctx: RequestContext): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> {
  return async (req, res) => {
    const deadline = limitRequestTime(req, ctx.requestTimeoutMs);
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://coordinator').pathname;
    } catch {
      sendError(res, 400, 'request target is not a valid URL path');
      return;
    }
    ctx.joinLimit.admit(pathname, req.socket.remoteAddress); // before anything is read or checked
    const entry = ctx.entries.find((e) => e.pattern.test(pathname));
    if (!entry) {
      sendError(res, 404, `no endpoint ${pathname.slice(0, 200)} (see docs/api.md for the API, version ${API_VERSION})`);
      return;
    }
    const route = entry.routes.find((r) => r.endpoint.method === req.method);
    if (!route) {
      const allow = entry.routes.map((r) => r.endpoint.method).join(', ');
      sendError(res, 405, `${req.method} is not allowed on ${pathname}; use ${allow}`, { allow });
      return;
    }
    const { endpoint } = route;
    if (PreAuthBodies.covers(route.name)) PreAuthBodies.refuseOversize(req, route.name);
    // An upload may take minutes; it must keep moving instead (watchUploadIdle).
    if (endpoint.transport === 'binary-upload') deadline.cancel();
    const denied = ctx.authorize(req, endpoint.auth);
    if (denied) {
      // The join token is a real credential, just not enough for an operator action: forbidden, not unauthenticated.
      const forbidden = endpoint.auth === 'operator' && tokensEqual(bearer(req) ?? '', ctx.joinTokens().current);
      sendError(res, forbidden ? 403 : 401, denied, forbidden ? {} : { 'www-authenticate': 'Bearer' });
      return;
    }
    const m = entry.pattern.exec(pathname)!;
    // Checked before the body is read: a request without the worker's session gets nothing from it.
    if (endpoint.auth === 'session') ctx.service.authenticate(workerIdParam(m[1]!), sessionOf(req));
    const proved = endpoint.auth === 'join-proof' ? proveJoin(req, ctx.challenges) : null;
    let body: unknown = undefined;
    let bodySha256Hex = sha256Hex(Buffer.alloc(0));
    if (endpoint.method === 'POST') {
      const refused = contentTypeProblem(req);
      if (refused) {
        sendError(res, 415, refused);
        return;
      }
      const raw = PreAuthBodies.covers(route.name) ? await ctx.preAuth.read(req, route.name) : await readBody(req, { maxBytes: MAX_BODY_BYTES, timeoutMs: ctx.bodyTimeoutMs });
      bodySha256Hex = sha256Hex(raw);
      if (endpoint.body) body = parseJsonBody(raw, endpoint.body, `${req.method} ${pathname}`);
    }
    // Node identity (node-keys.ts): a streamed upload is signed over the SHA-256 its path announces.
    const signing = { method: req.method ?? '', target: req.url ?? '/', bodySha256Hex: endpoint.transport === 'binary-upload' ? m.at(-1)! : bodySha256Hex, signed: signedPartsOf(req) };
    const joining = endpoint === workerApi.join ? (body as JoinRequest) : null;
    if (joining && proved) checkProvedJoin(joining, proved, ctx.service);
    const conn = connectionFacts(req.socket.remoteAddress, req.socket.localAddress);
    // A key nobody approved: listed as awaiting approval and answered 202, with nothing of the cluster (node-keys.ts).
    const admission = joining ? ctx.service.nodeKeys.checkJoin(joining, conn, signing) : null;
    if (admission && !admission.admit) return sendJson(res, 202, admission.awaiting);
    const pinAfterJoin = admission?.pin ?? null;
    if (endpoint.auth === 'session') ctx.service.nodeKeys.checkRequest(ctx.service.nodeOf(workerIdParam(m[1]!)), signing);
    const out = await route.handle({ params: m.slice(1), body: body as never, conn, req });
    if (joining && pinAfterJoin) ctx.service.nodeKeys.pin(joining.node, pinAfterJoin);
    if (endpoint.transport === 'prometheus-text') sendText(res, endpoint.status, String(out), PROMETHEUS_CONTENT_TYPE);
    else if (endpoint.transport === 'binary-download') sendDownload(res, out as BinaryDownload);
    else sendJson(res, endpoint.status, out);
  };
}

/** A request that threw: an ApiProblem answered with its status (closing the connection after a refused or unread body), anything else a 500. */
function answerFailure(error: unknown, req: http.IncomingMessage, res: http.ServerResponse, epoch: string): void {
  if (!isApiProblem(error)) {
    sendError(res, 500, `internal error in the coordinator: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  // After a refused body, or one never read (an upload refused before its first byte), the connection is
  // closed: the rest of the body is discarded, not parsed.
  const unread = !req.complete;
  const closing = error.status === 413 || error.status === 408 || unread;
  sendError(res, error.status, error.message, { ...(closing ? { connection: 'close' } : {}), ...(error.retryAfterS ? { 'retry-after': String(error.retryAfterS) } : {}) }, epoch);
  if (error.status === 408) res.once('finish', () => req.socket.destroy());
  else if (closing) {
    req.resume(); // swallow what is still coming so the client can read the answer
    setTimeout(() => req.socket.destroy(), 5_000).unref();
  }
}

export function startCoordinatorHttp(service: CoordinatorService, opts: CoordinatorHttpOptions): Promise<CoordinatorHttp> {
  const host = opts.host ?? '127.0.0.1';
  const bodyTimeoutMs = opts.bodyTimeoutMs ?? 10_000;
  const headersTimeoutMs = opts.headersTimeoutMs ?? 5_000;
  const servedFirst = opts.servedFirst ?? servedFirstByCluster(() => service.workers());
  const preAuth = new PreAuthBodies({ timeoutMs: Math.min(PRE_AUTH_BODY_MS, bodyTimeoutMs), ...opts.preAuthBodies, servedFirst });
  const joinLimit = new JoinRateLimit({ now: () => Date.now(), ...opts.joinRateLimit });
  const joinTokens = opts.joinTokens ?? (() => ({ current: opts.joinToken, retired: [] }));
  const challenges = new JoinChallenges({ now: () => Date.now(), tokens: joinTokens, certSha256: opts.tls ? fingerprintOf(opts.tls.certPem) : null });
  const entries = buildRoutes(handlers(service, opts, challenges));

  const requestTimeoutMs = Math.max(bodyTimeoutMs, headersTimeoutMs) + 5_000;
  const authorize = authorizer(opts.operatorToken, joinTokens);
  const handle = requestHandler({ service, entries, preAuth, joinLimit, joinTokens, challenges, authorize, bodyTimeoutMs, requestTimeoutMs });

  // Node checks header and request timeouts only every connectionsCheckingInterval (30 s by default).
  // Headers past 8 KiB are refused (431): what a socket's parser may hold is bounded.
  const serverOptions = { connectionsCheckingInterval: Math.min(1_000, Math.max(100, headersTimeoutMs / 2)), maxHeaderSize: 8 * 1024 };
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    res.on('error', () => undefined);
    req.on('error', () => undefined);
    handle(req, res).catch((error: unknown) => answerFailure(error, req, res, service.epoch));
  };
  const server: http.Server = opts.tls
    ? https.createServer({ ...serverOptions, handshakeTimeout: headersTimeoutMs, cert: opts.tls.certPem, key: opts.tls.keyPem }, onRequest)
    : http.createServer(serverOptions, onRequest);
  const presence = attachPresence(server, service, {
    sessionOf,
    ...(opts.abruptCloseGraceMs !== undefined ? { abruptCloseGraceMs: opts.abruptCloseGraceMs } : {}),
  });
  // A relaunch reaches every member at once instead of at each one's next heartbeat (up to an interval later).
  service.setInstructionListener((workerId) => presence.poke(workerId));
  server.headersTimeout = headersTimeoutMs;
  // Off: Node's whole-request deadline cannot spare uploads; handle() applies the same one to every other request.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 15_000;
  const guard = guardConnections(server, opts.connections ?? COORDINATOR_CONNECTION_LIMITS, servedFirst);
  answerClientErrors(server); // bad bytes or slow headers: answered, then destroyed (never left half-closed)

  return new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(new Error(`coordinator API could not listen on ${host}:${opts.port ?? 0}: ${e.message}`));
    server.once('error', onError);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', onError);
      server.on('error', () => undefined);
      const port = (server.address() as AddressInfo).port;
      const shownHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `${opts.tls ? 'https' : 'http'}://${shownHost}:${port}`,
        port,
        presenceCount: () => presence.connected(),
        openConnections: () => guard.open(),
        refusedConnections: () => guard.refused(),
        close: () =>
          new Promise<void>((done) => {
            service.setInstructionListener(null);
            presence.close();
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
