/**
 * THE table of the coordinator's HTTP API: every endpoint's method, path, auth, body and reply, declared once.
 * The server (src-main/core/api/coordinator-http.ts) builds its routes from it, one handler per entry name, so
 * an endpoint cannot exist without an entry; the agent's client builds paths and reads replies from the same
 * entries. Like ipc.ts for the renderer. docs/api.md describes each endpoint for people.
 */
import { z } from 'zod';
import type { CoordinatorEvent, RunSnapshot, WorkerSnapshot } from './training';
import type { AwaitingMachine, PreApproval } from './nodes/awaiting-machine';
import type { LinkMeasurement } from './links/link-matrix';
import type { RunSeries } from './runs/run-series';
import { runLabelChangeSchema } from './runs/run-labels';
import type { ClusterHistory } from './cluster/cluster-history';
import { JOB_ID_PATTERN, jobAckSchema, jobCompleteSchema, jobFailSchema, jobOutputSchema, jobStartedSchema, manifestSubmitSchema } from './jobs/job-protocol';
import type { ArtifactSnapshot, JobSnapshot, JobsPageQuery, JobsState, ManifestSubmitResult } from './jobs/types';
import { jobsPageSearch } from './jobs/jobs-page';
import { artifactRetentionSchema, type ArtifactHousekeeping } from './jobs/artifact-retention';
import {
  API_VERSION,
  apiPaths,
  heartbeatRequestSchema,
  heartbeatResponseSchema,
  joinChallengeReplySchema,
  joinChallengeRequestSchema,
  joinRequestSchema,
  joinReplySchema,
  leaveRequestSchema,
  reportRequestSchema,
  runSpecSchema,
} from './worker-protocol';
import { snapshotManifestSchema } from './projects/project-protocol';

/**
 * none: anyone. join-proof: the worker's proof of the join token for a challenge it took (the token itself is
 * never sent). session: a worker request after the join, authenticated by the session secret of the worker in
 * the path (and the node's signature). operator: the operator token.
 */
export type ApiAuth = 'none' | 'join-proof' | 'session' | 'operator';

/** How an endpoint is reached: a JSON request, or a WebSocket upgrade (presence-server.ts serves those). */
export type ApiTransport = 'json' | 'prometheus-text' | 'websocket' | 'binary-upload' | 'binary-download';

export interface EndpointPath<P extends unknown[]> {
  /** Matches the concrete path; each capture group is one parameter, in order, still URL-encoded. */
  pattern: RegExp;
  build: (...params: P) => string;
}

export interface Endpoint<
  P extends unknown[] = unknown[],
  B extends z.ZodType | null = z.ZodType | null,
  R extends z.ZodType = z.ZodType,
  T extends ApiTransport = ApiTransport,
> {
  method: 'GET' | 'POST' | 'PUT';
  path: EndpointPath<P>;
  auth: ApiAuth;
  /** Schema of the JSON body; null when the endpoint takes none. */
  body: B;
  /** Schema of a 2xx reply (errors are always `{ error: string }`). */
  reply: R;
  /** The 2xx status of a success. */
  status: 200 | 201;
  transport: T;
}

function fixedPath(path: string): EndpointPath<[]> {
  return { pattern: new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`), build: () => path };
}

/** A path with parameters: `pattern`'s groups are the parameters `build` takes. */
function paramPath<P extends unknown[]>(pattern: RegExp, build: (...params: P) => string): EndpointPath<P> {
  return { pattern, build };
}

function endpoint<P extends unknown[], B extends z.ZodType | null, R extends z.ZodType, T extends ApiTransport = 'json'>(
  e: Omit<Endpoint<P, B, R, T>, 'status' | 'transport'> & { status?: 200 | 201; transport?: T },
): Endpoint<P, B, R, T> {
  return { status: 200, transport: 'json' as T, ...e } as Endpoint<P, B, R, T>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Operator replies carry the app's own snapshot types (training.ts), which the coordinator builds from typed
 * code; a client checks their frame (an object with its id), not every field.
 */
const runSnapshotSchema = z.custom<RunSnapshot>((v) => isRecord(v) && typeof v.id === 'string' && isRecord(v.spec), 'expected a run snapshot');
const workerSnapshotSchema = z.custom<WorkerSnapshot>((v) => isRecord(v) && typeof v.id === 'number' && typeof v.node === 'string', 'expected a worker snapshot');
const linkSchema = z.custom<LinkMeasurement>((v) => isRecord(v) && typeof v.fromId === 'number' && typeof v.toId === 'number', 'expected a link measurement');
const eventSchema = z.custom<CoordinatorEvent>((v) => isRecord(v) && typeof v.seq === 'number' && typeof v.message === 'string', 'expected an event');

export const healthReplySchema = z.object({ status: z.literal('ok'), apiVersion: z.literal(API_VERSION) });
export const okReplySchema = z.object({ ok: z.literal(true) });
const awaitingSchema = z.custom<AwaitingMachine>((v) => isRecord(v) && typeof v.node === 'string' && typeof v.fingerprint === 'string', 'expected a machine awaiting approval');
const preApprovalSchema = z.custom<PreApproval>((v) => isRecord(v) && typeof v.node === 'string' && typeof v.fingerprint === 'string' && typeof v.expiresAt === 'number', 'expected a pre-approval');
/** What approve and revoke answer; `message` says when approve kept a pre-approval instead (the machine was not listed with that key). */
const approvalReplySchema = z.object({ workers: z.array(workerSnapshotSchema), awaiting: z.array(awaitingSchema), preApprovals: z.array(preApprovalSchema).default([]), message: z.string().optional() });
export const stateReplySchema = z.object({
  workers: z.array(workerSnapshotSchema),
  runs: z.array(runSnapshotSchema),
  events: z.array(eventSchema),
  /** Machines awaiting approval (or a held-back key); older coordinators leave it out. */
  awaiting: z.array(awaitingSchema).default([]),
  /** Keys approved by fingerprint before their machine's first join; older coordinators leave it out. */
  preApprovals: z.array(preApprovalSchema).default([]),
  /** The measured links between workers (links/link-matrix.ts); older coordinators leave it out. */
  links: z.array(linkSchema).default([]),
});
/** POST /v1/links/measure: the workers whose links to measure now (all active ones when left out). */
export const measureLinksRequestSchema = z.object({ workers: z.array(z.number().int().nonnegative()).max(1000).optional() });
export const linksReplySchema = z.object({ links: z.array(linkSchema) });
/** Body of approve and accept-key: exactly the key the person saw. */
export const nodeKeyChoiceSchema = z.object({ fingerprint: z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, 'fingerprint must be SHA256: and 43 base64 characters, as `gpu-share workers list` shows it') });
/**
 * Body of approve: the fingerprint of exactly the key to approve, and — when the operator read the node's key
 * itself (a node started over SSH, before its agent joins) — that whole key, which the fingerprint must match.
 */
export const nodeApproveSchema = nodeKeyChoiceSchema.extend({
  publicKey: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'publicKey must be a raw Ed25519 key: 32 bytes in base64url (43 characters)').optional(),
});
const nodePath = (action: string) =>
  paramPath(new RegExp(`^/v1/nodes/([^/]+)/${action}$`), (node: string) => `/v1/nodes/${encodeURIComponent(node)}/${action}`);
/** `times`: when the coordinator received each line of `output` (epoch ms; null: not recorded); absent from older coordinators. */
export const runOutputReplySchema = z.object({ runId: z.string(), output: z.string(), times: z.array(z.number().nullable()).optional() });
const clusterHistoryReplySchema = z.custom<ClusterHistory>((v) => isRecord(v) && Array.isArray(v.nodes) && typeof v.stepMs === 'number', 'expected a cluster history');
const runSeriesReplySchema = z.custom<RunSeries>((v) => isRecord(v) && typeof v.runId === 'string' && isRecord(v.resources), 'expected a run series');

const jobSnapshotSchema = z.custom<JobSnapshot>((v) => isRecord(v) && typeof v.id === 'string' && typeof v.status === 'string', 'expected a job snapshot');
const jobsStateSchema = z.custom<JobsState>((v) => isRecord(v) && Array.isArray(v.jobs) && Array.isArray(v.ledger), 'expected the jobs state');
const artifactSchema = z.custom<ArtifactSnapshot>((v) => isRecord(v) && typeof v.sha256 === 'string', 'expected an artifact');
const manifestResultSchema = z.custom<ManifestSubmitResult>((v) => isRecord(v) && typeof v.ok === 'boolean', 'expected a manifest result');

/** /v1/workers/<worker>/jobs/<job>/<action>: a worker's call about one of its job claims. */
const workerJobPath = (action: string) =>
  paramPath(new RegExp(`^/v1/workers/([^/]+)/jobs/([^/]+)/${action}$`), (workerId: number, jobId: string) => `/v1/workers/${workerId}/jobs/${jobId}/${action}`);
/** /v1/jobs/<job>[/<action>]: the operator's view of and actions on one job. */
const jobPath = (action: string | null) =>
  paramPath(new RegExp(`^/v1/jobs/([^/]+)${action ? `/${action}` : ''}$`), (jobId: string) => `/v1/jobs/${encodeURIComponent(jobId)}${action ? `/${action}` : ''}`);

const workerIdPath = (action: string) => paramPath(new RegExp(`^/v1/workers/([^/]+)/${action}$`), (workerId: number) => `/v1/workers/${workerId}/${action}`);

export const workerApi = {
  health: endpoint({ method: 'GET', path: fixedPath(apiPaths.health), auth: 'none', body: null, reply: healthReplySchema }),
  /** The join's first step: the coordinator proves it holds the worker's join token (nothing about the worker is sent yet). */
  joinChallenge: endpoint({ method: 'POST', path: fixedPath(apiPaths.joinChallenge), auth: 'none', body: joinChallengeRequestSchema, reply: joinChallengeReplySchema }),
  /** Carries the worker's proof for a challenge in JOIN_CHALLENGE_HEADER / JOIN_PROOF_HEADER, no bearer token. */
  join: endpoint({ method: 'POST', path: fixedPath(apiPaths.join), auth: 'join-proof', body: joinRequestSchema, reply: joinReplySchema }),
  heartbeat: endpoint({ method: 'POST', path: workerIdPath('heartbeat'), auth: 'session', body: heartbeatRequestSchema, reply: heartbeatResponseSchema }),
  report: endpoint({ method: 'POST', path: workerIdPath('report'), auth: 'session', body: reportRequestSchema, reply: okReplySchema }),
  leave: endpoint({ method: 'POST', path: workerIdPath('leave'), auth: 'session', body: leaveRequestSchema, reply: okReplySchema }),
  /** Held open while the agent lives; its end tells the coordinator at once (see presence-server.ts). */
  presence: endpoint({ method: 'GET', path: workerIdPath('presence'), auth: 'session', body: null, reply: z.null(), transport: 'websocket' }),
  drain: endpoint({ method: 'POST', path: workerIdPath('drain'), auth: 'operator', body: null, reply: z.object({ workers: z.array(workerSnapshotSchema) }) }),
  /** Forgets every offline worker record of the node, for good (state.db too); 409 while it is online or in a live run. Its key stays pinned. */
  forgetNode: endpoint({ method: 'POST', path: nodePath('forget'), auth: 'operator', body: null, reply: z.object({ workers: z.array(workerSnapshotSchema) }) }),
  /** Pins the new key a node presented (held back since): docs/api.md, "Node identity". */
  acceptNodeKey: endpoint({ method: 'POST', path: nodePath('accept-key'), auth: 'operator', body: nodeKeyChoiceSchema, reply: z.object({ workers: z.array(workerSnapshotSchema) }) }),
  /** Approves exactly the key of a machine awaiting approval: docs/api.md, "Node identity". */
  approveNode: endpoint({ method: 'POST', path: nodePath('approve'), auth: 'operator', body: nodeApproveSchema, reply: approvalReplySchema }),
  /** Takes a node's approval back: its session ends, it leaves every run, its next join awaits approval again. */
  revokeNode: endpoint({ method: 'POST', path: nodePath('revoke'), auth: 'operator', body: null, reply: approvalReplySchema }),
  /** Replaces the join token; machines already approved keep joining with the old one (docs/api.md, "Joining"). */
  rotateJoinToken: endpoint({ method: 'POST', path: fixedPath('/v1/join-token/rotate'), auth: 'operator', body: null, reply: z.object({ joinToken: z.string() }) }),
  state: endpoint({ method: 'GET', path: fixedPath(apiPaths.state), auth: 'operator', body: null, reply: stateReplySchema }),
  /** Measures every link among the active workers now (busy or not) and answers when done, or after a minute. */
  measureLinks: endpoint({ method: 'POST', path: fixedPath('/v1/links/measure'), auth: 'operator', body: measureLinksRequestSchema, reply: linksReplySchema }),
  listRuns: endpoint({ method: 'GET', path: fixedPath(apiPaths.runs), auth: 'operator', body: null, reply: z.object({ runs: z.array(runSnapshotSchema) }) }),
  startRun: endpoint({ method: 'POST', path: fixedPath(apiPaths.runs), auth: 'operator', body: runSpecSchema, reply: runSnapshotSchema, status: 201 }),
  run: endpoint({ method: 'GET', path: paramPath(/^\/v1\/runs\/([^/]+)$/, apiPaths.run), auth: 'operator', body: null, reply: runSnapshotSchema }),
  runOutput: endpoint({ method: 'GET', path: paramPath(/^\/v1\/runs\/([^/]+)\/output$/, apiPaths.runOutput), auth: 'operator', body: null, reply: runOutputReplySchema }),
  /** Every machine's CPU, RAM and GPU use, one point a minute over the last 24 h (cluster-history-book.ts). */
  clusterHistory: endpoint({ method: 'GET', path: fixedPath('/v1/cluster/history'), auth: 'operator', body: null, reply: clusterHistoryReplySchema }),
  /** Samples/s and each member's resources over the run, thinned to 600 points a series (kept in the state database across restarts). */
  runSeries: endpoint({ method: 'GET', path: paramPath(/^\/v1\/runs\/([^/]+)\/series$/, (runId: string) => `/v1/runs/${encodeURIComponent(runId)}/series`), auth: 'operator', body: null, reply: runSeriesReplySchema }),
  stopRun: endpoint({ method: 'POST', path: paramPath(/^\/v1\/runs\/([^/]+)\/stop$/, apiPaths.stopRun), auth: 'operator', body: null, reply: runSnapshotSchema }),
  /** Adds and removes the run's tags, replaces its note (src-shared/runs/run-labels.ts: 400 past a limit); any state. */
  labelRun: endpoint({ method: 'POST', path: paramPath(/^\/v1\/runs\/([^/]+)\/labels$/, (runId: string) => `/v1/runs/${encodeURIComponent(runId)}/labels`), auth: 'operator', body: runLabelChangeSchema, reply: runSnapshotSchema }),
  /** An ended run and all kept for it (output, loss, shard maps), gone for good; 409 for a live one. */
  deleteRun: endpoint({ method: 'POST', path: paramPath(/^\/v1\/runs\/([^/]+)\/delete$/, (runId: string) => `/v1/runs/${encodeURIComponent(runId)}/delete`), auth: 'operator', body: null, reply: z.object({ deleted: z.string() }) }),
  // --- adapter jobs: the worker side (session auth; the claim token fences each call) --------------------------
  jobStarted: endpoint({ method: 'POST', path: workerJobPath('started'), auth: 'session', body: jobStartedSchema, reply: jobAckSchema }),
  jobOutput: endpoint({ method: 'POST', path: workerJobPath('output'), auth: 'session', body: jobOutputSchema, reply: jobAckSchema }),
  jobComplete: endpoint({ method: 'POST', path: workerJobPath('complete'), auth: 'session', body: jobCompleteSchema, reply: jobAckSchema }),
  jobFail: endpoint({ method: 'POST', path: workerJobPath('fail'), auth: 'session', body: jobFailSchema, reply: jobAckSchema }),
  /** Body: the tarball, streamed; its sha256 must be the one in the path; the claim token in CLAIM_TOKEN_HEADER. */
  uploadArtifact: endpoint({
    method: 'PUT',
    path: paramPath(/^\/v1\/workers\/([^/]+)\/jobs\/([^/]+)\/artifact\/([^/]+)$/, (workerId: number, jobId: string, sha256: string) => `/v1/workers/${workerId}/jobs/${jobId}/artifact/${sha256}`),
    auth: 'session',
    body: null,
    reply: z.object({ sha256: z.string(), sizeBytes: z.number(), stored: z.enum(['new', 'existing']) }),
    status: 201,
    transport: 'binary-upload',
  }),
  // --- a run's project and result (projects/project-protocol.ts) -------------------------------------------
  /** The snapshot's manifest, to a worker the coordinator asked to prepare it. */
  projectManifest: endpoint({
    method: 'GET',
    path: paramPath(/^\/v1\/workers\/([^/]+)\/projects\/([0-9a-f]{64})$/, (workerId: number, snapshot: string) => `/v1/workers/${workerId}/projects/${snapshot}`),
    auth: 'session',
    body: null,
    reply: snapshotManifestSchema,
  }),
  /** One file of a snapshot, by its sha256 (application/octet-stream). */
  projectBlob: endpoint({
    method: 'GET',
    path: paramPath(
      /^\/v1\/workers\/([^/]+)\/projects\/([0-9a-f]{64})\/blobs\/([0-9a-f]{64})$/,
      (workerId: number, snapshot: string, sha256: string) => `/v1/workers/${workerId}/projects/${snapshot}/blobs/${sha256}`,
    ),
    auth: 'session',
    body: null,
    reply: z.instanceof(Uint8Array),
    transport: 'binary-download',
  }),
  /** Body: the tarball of what global rank 0 wrote to GPU_SHARE_OUTPUT_DIR, streamed; its sha256 must be the one in the path. */
  uploadRunArtifact: endpoint({
    method: 'PUT',
    path: paramPath(
      /^\/v1\/workers\/([^/]+)\/runs\/([^/]+)\/artifact\/([0-9a-f]{64})$/,
      (workerId: number, runId: string, sha256: string) => `/v1/workers/${workerId}/runs/${encodeURIComponent(runId)}/artifact/${sha256}`,
    ),
    auth: 'session',
    body: null,
    reply: z.object({ sha256: z.string(), sizeBytes: z.number(), stored: z.enum(['new', 'existing']) }),
    status: 201,
    transport: 'binary-upload',
  }),
  /** The run's result tarball (application/gzip); 404 while it has none. */
  runArtifact: endpoint({
    method: 'GET',
    path: paramPath(/^\/v1\/runs\/([^/]+)\/artifact$/, (runId: string) => `/v1/runs/${encodeURIComponent(runId)}/artifact`),
    auth: 'operator',
    body: null,
    reply: z.instanceof(Uint8Array),
    transport: 'binary-download',
  }),
  // --- adapter jobs: the operator side --------------------------------------------------------------------
  /** One page of the queue with counts of all of it: ?offset=&limit=&status= (src-shared/jobs/jobs-page.ts). */
  jobsState: endpoint({
    method: 'GET',
    path: paramPath(/^\/v1\/jobs$/, (query?: Partial<JobsPageQuery>) => `/v1/jobs${jobsPageSearch(query)}`),
    auth: 'operator',
    body: null,
    reply: jobsStateSchema,
  }),
  submitManifest: endpoint({ method: 'POST', path: fixedPath('/v1/jobs/manifest'), auth: 'operator', body: manifestSubmitSchema, reply: manifestResultSchema }),
  job: endpoint({ method: 'GET', path: jobPath(null), auth: 'operator', body: null, reply: jobSnapshotSchema }),
  /** `times`: when each line of `output` was received (epoch ms, null where not recorded); absent from older coordinators. */
  jobLog: endpoint({ method: 'GET', path: jobPath('output'), auth: 'operator', body: null, reply: z.object({ jobId: z.string(), output: z.string(), times: z.array(z.number().nullable()).optional() }) }),
  cancelJob: endpoint({ method: 'POST', path: jobPath('cancel'), auth: 'operator', body: null, reply: jobSnapshotSchema }),
  requeueJob: endpoint({ method: 'POST', path: jobPath('requeue'), auth: 'operator', body: null, reply: jobSnapshotSchema }),
  /** An ended job and its output, gone for good (its artifact stays); 409 for a live one. */
  deleteJob: endpoint({ method: 'POST', path: jobPath('delete'), auth: 'operator', body: null, reply: z.object({ deleted: z.string() }) }),
  /** `housekeeping`: the retention rule, how many artifacts are kept and their bytes (absent from older coordinators). */
  listArtifacts: endpoint({
    method: 'GET',
    path: fixedPath('/v1/artifacts'),
    auth: 'operator',
    body: null,
    reply: z.object({ artifacts: z.array(artifactSchema), housekeeping: z.custom<ArtifactHousekeeping>((v) => isRecord(v) && isRecord(v.retention), 'expected the retention rule').optional() }),
  }),
  /**
   * Deletes an artifact (its rows in state.db, then its bytes); with `jobId`, only that job's claim on it: the bytes
   * go once no job attempt or run refers to them. 409 while a job that produced it runs again or it is being
   * uploaded or downloaded.
   */
  deleteArtifact: endpoint({
    method: 'POST',
    path: paramPath(/^\/v1\/artifacts\/([0-9a-f]{64})\/delete$/, (sha256: string) => `/v1/artifacts/${sha256}/delete`),
    auth: 'operator',
    body: z.object({ jobId: z.string().regex(JOB_ID_PATTERN, 'a job id is 64 lowercase hex digits').optional() }).strict(),
    reply: z.object({ sha256: z.string(), removed: z.boolean(), freedBytes: z.number(), stillUsedBy: z.number() }),
  }),
  /** Sets the retention rule (null: no such limit) and enforces it at once: `removed` lists what went. */
  setArtifactRetention: endpoint({
    method: 'POST',
    path: fixedPath('/v1/artifacts/retention'),
    auth: 'operator',
    body: artifactRetentionSchema,
    reply: z.object({ retention: artifactRetentionSchema, removed: z.array(z.object({ sha256: z.string(), sizeBytes: z.number(), why: z.string() })) }),
  }),
  /** The tarball (application/gzip). */
  downloadArtifact: endpoint({
    method: 'GET',
    path: paramPath(/^\/v1\/artifacts\/([0-9a-f]{64})$/, (sha256: string) => `/v1/artifacts/${sha256}`),
    auth: 'operator',
    body: null,
    reply: z.instanceof(Uint8Array),
    transport: 'binary-download',
  }),
  /** Prometheus text format 0.0.4; 404 when the coordinator was started without metrics. */
  metrics: endpoint({ method: 'GET', path: fixedPath(apiPaths.metrics), auth: 'operator', body: null, reply: z.string(), transport: 'prometheus-text' }),
} as const;

export type WorkerApi = typeof workerApi;
export type EndpointName = keyof WorkerApi;
/** Endpoints answered over plain HTTP (all but the WebSocket upgrade). */
export type HttpEndpointName = { [K in EndpointName]: WorkerApi[K]['transport'] extends 'websocket' ? never : K }[EndpointName];
export type EndpointParams<K extends EndpointName> = Parameters<WorkerApi[K]['path']['build']>;
export type EndpointBody<K extends EndpointName> = WorkerApi[K]['body'] extends z.ZodType ? z.input<WorkerApi[K]['body']> : undefined;
export type EndpointReply<K extends EndpointName> = z.output<WorkerApi[K]['reply']>;

/** Content type of a Prometheus text exposition. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
