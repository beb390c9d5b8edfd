// A small but real JobsPort for the API tests: claims in a map, artifacts in a real ArtifactStore, so the job
// routes are tested over real HTTP without the scheduler behind them. Plus the server and a joined worker.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { startCoordinatorHttp, type CoordinatorHttp, type CoordinatorHttpOptions } from '../../../src-main/core/api/coordinator-http';
import { ApiProblem } from '../../../src-main/core/coordinator/common/api-problem';
import { NO_RETENTION, type ArtifactHousekeeping, type ArtifactRetention } from '../../../src-shared/jobs/artifact-retention';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import type { JobAck, JobsPort, StoredArtifact } from '../../../src-main/core/jobs/jobs-port';
import { CLAIM_TOKEN_HEADER } from '../../../src-shared/jobs/job-protocol';
import type { ArtifactSnapshot, JobSnapshot, JobsState, ManifestSubmitResult } from '../../../src-shared/jobs/types';
import { apiPaths, joinResponseSchema, SESSION_HEADER } from '../../../src-shared/worker-protocol';
import { joinProofHeaders } from './join-proof-client';
import { jobSnapshot } from '../cli/jobs-fixtures';
import { FakeClock } from '../coordinator/fake-clock';

export const JOIN = 'join-' + 'e'.repeat(24);
export const OPERATOR = 'op-' + 'f'.repeat(24);
export const JOB = createHash('sha256').update('job-a').digest('hex');
export const OTHER_JOB = createHash('sha256').update('job-b').digest('hex');
export const TOKEN = 'claimAAAA1.1';

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

function snapshot(id: string, status: JobSnapshot['status']): JobSnapshot {
  return { ...jobSnapshot(id === JOB ? 'job-a' : id), id, status };
}

/** Every call the routes made, as `name jobId detail`. */
export class ClaimsJobsPort implements JobsPort {
  readonly claims = new Map<string, { workerId: number; token: string }>();
  readonly calls: string[] = [];
  readonly uploads: { settled: 'ok' | 'refused'; error?: string }[] = [];
  /** The artifact index: what completions referred to (the store never removes those). */
  readonly indexed = new Set<string>();

  constructor(readonly store: ArtifactStore) {
    store.useIndex((sha) => this.indexed.has(sha));
  }

  private check(workerId: number, jobId: string, token: string): void {
    const claim = this.claims.get(jobId);
    if (!claim) throw new ApiProblem(404, `no job ${jobId}`);
    if (claim.workerId !== workerId || claim.token !== token) throw new ApiProblem(409, `token ${token} is not the current claim of job ${jobId}; stop it`);
  }

  private ack(name: string, workerId: number, jobId: string, token: string, detail: string): JobAck {
    this.check(workerId, jobId, token);
    this.calls.push(`${name} ${workerId} ${jobId} ${detail}`);
    return { ok: true, status: name === 'complete' ? 'completed' : name === 'fail' ? 'failed' : 'running' };
  }

  started(workerId: number, jobId: string, body: { token: string; pid: number }): JobAck {
    return this.ack('started', workerId, jobId, body.token, `pid=${body.pid}`);
  }
  output(workerId: number, jobId: string, body: { token: string; data: string }): JobAck {
    return this.ack('output', workerId, jobId, body.token, body.data);
  }
  complete(workerId: number, jobId: string, body: { token: string; artifactSha256: string }): JobAck {
    if (!this.store.has(body.artifactSha256)) throw new ApiProblem(400, 'upload the artifact first');
    const ack = this.ack('complete', workerId, jobId, body.token, body.artifactSha256);
    this.indexed.add(body.artifactSha256);
    this.store.indexed(`${jobId}/${body.token}`);
    return ack;
  }
  fail(workerId: number, jobId: string, body: { token: string; error: string }): JobAck {
    return this.ack('fail', workerId, jobId, body.token, body.error);
  }

  async upload(workerId: number, jobId: string, claimToken: string, sha: string, body: Readable, contentLength: number | null): Promise<StoredArtifact> {
    this.check(workerId, jobId, claimToken);
    try {
      const stored = await this.store.put(body, sha, contentLength, `${jobId}/${claimToken}`);
      this.uploads.push({ settled: 'ok' });
      return stored;
    } catch (error) {
      this.uploads.push({ settled: 'refused', error: error instanceof Error ? error.message : String(error) });
      throw error;
    }
  }

  state(): JobsState {
    const counts = { total: 1, pending: 0, claimed: 0, running: 1, completed: 0, failed: 0, cancelled: 0 };
    return { jobs: [snapshot(JOB, 'running')], ledger: [], previews: [], counts, placement: 'binpack', manifestName: null };
  }
  async submit(fileName: string, text: string): Promise<ManifestSubmitResult> {
    this.calls.push(`submit ${fileName} ${text}`);
    return { ok: true, fileName, added: [JOB], kept: [], missing: [] };
  }
  job(jobId: string): JobSnapshot {
    if (jobId !== JOB) throw new ApiProblem(404, `no job ${jobId}`);
    return snapshot(jobId, 'running');
  }
  jobOutput(jobId: string): { text: string; times: (number | null)[] } {
    this.job(jobId);
    return { text: 'step 1 loss 2.0\n', times: [null] };
  }
  cancel(jobId: string): JobSnapshot {
    const job = this.job(jobId);
    this.calls.push(`cancel ${jobId}`);
    return { ...job, status: 'cancelled' };
  }
  requeue(jobId: string): JobSnapshot {
    const job = this.job(jobId);
    this.calls.push(`requeue ${jobId}`);
    return { ...job, status: 'pending' };
  }
  deleteJob(jobId: string): { deleted: string } {
    this.job(jobId);
    this.calls.push(`delete ${jobId}`);
    return { deleted: jobId };
  }
  artifacts(): ArtifactSnapshot[] {
    return [];
  }
  openArtifact(sha: string): Promise<{ stream: Readable; sizeBytes: number } | null> {
    return this.store.openInspected(sha);
  }
  readonly housekeeping = {
    delete: (sha256: string, jobId?: string) => (this.calls.push(`delete artifact ${sha256} of ${jobId}`), { sha256, removed: true, freedBytes: 0, stillUsedBy: 0 }),
    summary: (): ArtifactHousekeeping => ({ retention: NO_RETENTION, count: 0, totalBytes: 0 }),
    setRule: (rule: ArtifactRetention) => ({ retention: rule, removed: [] }),
  };
}

export interface JobsApi {
  api: CoordinatorHttp;
  svc: CoordinatorService;
  port: ClaimsJobsPort;
  /** The store's folder: nothing may be left in it (temp files included) after a refusal. */
  storeDir: string;
  /** The test's whole temp folder (the store lives inside it). */
  root: string;
  workers: { id: number; session: string }[];
  close(): Promise<void>;
}

/** A coordinator with the fixture port (unless `jobs: false`) and two joined workers. */
export async function startJobsApi(
  opts: { maxBytes?: number; jobs?: boolean; http?: Partial<CoordinatorHttpOptions> | ((svc: CoordinatorService, root: string, port: ClaimsJobsPort) => Partial<CoordinatorHttpOptions>) } = {},
): Promise<JobsApi> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'job-routes-'));
  const storeDir = path.join(root, 'artifacts');
  const port = new ClaimsJobsPort(new ArtifactStore(storeDir, opts.maxBytes !== undefined ? { maxBytes: opts.maxBytes } : {}));
  const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
  const api = await startCoordinatorHttp(svc, { joinToken: JOIN, operatorToken: OPERATOR, ...(opts.jobs === false ? {} : { jobs: port }), ...(typeof opts.http === 'function' ? opts.http(svc, root, port) : opts.http) });
  const workers: JobsApi['workers'] = [];
  for (const node of ['alpha', 'beta']) {
    const res = await fetch(api.url + apiPaths.join, {
      method: 'POST',
      headers: { ...(await joinProofHeaders(api.url, JOIN)), 'content-type': 'application/json' },
      body: JSON.stringify({ node, agentVersion: 'test', machineId: `machine-${node}`.padEnd(24, 'm'), gpus: [], cpuCores: 4, ramMb: 8192, advertiseHost: '127.0.0.1', rdzvPort: 29500, python: { path: '/usr/bin/python3', torchVersion: '1.13.1' } }),
    });
    const joined = joinResponseSchema.parse(await res.json());
    workers.push({ id: joined.workerId, session: joined.sessionSecret });
  }
  port.claims.set(JOB, { workerId: workers[0]!.id, token: TOKEN });
  return {
    api,
    svc,
    port,
    storeDir,
    root,
    workers,
    close: async () => {
      await api.close();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Every file under `dir` (relative paths), temp files included. */
export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)))
    .sort();
}

export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A request through node:http, so a test decides how the body goes: whole with its length, chunked (no length),
 * or as a function that writes it piece by piece.
 */
export function request(
  api: CoordinatorHttp,
  method: string,
  urlPath: string,
  opts: { headers?: Record<string, string>; body?: Buffer; chunked?: boolean; write?: (req: http.ClientRequest) => void } = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.body && !opts.chunked) headers['content-length'] = String(opts.body.length);
    const req = http.request(api.url + urlPath, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.write) opts.write(req);
    else req.end(opts.body);
  });
}

/** Headers of worker `w`'s upload: its session, the claim token (no join token: it never crosses the wire). */
export function uploadHeaders(w: { session: string }, token: string | null = TOKEN): Record<string, string> {
  return { [SESSION_HEADER]: w.session, 'content-type': 'application/gzip', ...(token ? { [CLAIM_TOKEN_HEADER]: token } : {}) };
}

export function uploadPath(workerId: number, sha: string, jobId = JOB): string {
  return `/v1/workers/${workerId}/jobs/${jobId}/artifact/${sha}`;
}

/** Polls until `check` holds (or fails the test after `ms`). */
export async function eventually(check: () => boolean, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
