/**
 * The worker's side of the coordinator HTTP API: JSON over node:http(s), the join proved by a challenge on the
 * join token (join-proof.ts; the token itself is never sent) and, once joined, the session's secret. Every call
 * resolves to a tagged reply instead of throwing (platform/net/api-reply.ts says why).
 */
import net from 'node:net';
import { workerApi, type EndpointBody, type EndpointName, type EndpointParams } from '../../src-shared/worker-api';
import { SESSION_HEADER } from '../../src-shared/worker-protocol';
import type { PostOptions, RawReply } from '../platform/net/http-post';
import type { Connector } from '../platform/net/pinned-connection';
import { ApiConnection } from '../platform/net/api-connection';
import { describeNetworkError, interpretReply, type ApiReply } from '../platform/net/api-reply';
import { putFile } from './artifact-upload';
import { downloadFile, type DownloadResult } from '../platform/net/download-file';
import type { NodeIdentity } from './node-identity';
import { bodySigner, sha256Hex, signatureHeaders, type BodySigner } from './request-signer';
import { normalizeAddress } from '../platform/runs/local-interface';

// The pieces the operator CLI shares (platform/net/), re-exported for the agent's modules and tests.
export { describeFailure, describeNetworkError, readReply, type ApiReply } from '../platform/net/api-reply';
export { CERT_ENV, parseCoordinatorUrl, trustProblem } from '../platform/net/coordinator-url';

export const DEFAULT_REQUEST_TIMEOUT_MS = 5000;

/** Endpoints whose body is a file streamed as it is (see workerApi's binary-upload transport). */
type UploadEndpoint = 'uploadArtifact' | 'uploadRunArtifact';
/** Endpoints that answer a file, fetched to disk and checked by sha256 (see workerApi's binary-download transport). */
type DownloadEndpoint = 'projectBlob';

export interface FileUpload {
  file: string;
  sizeBytes: number;
  contentType: string;
  /** Besides the auth headers (e.g. the claim token). */
  headers: Record<string, string>;
}

export interface CoordinatorClientOptions {
  /** SHA-256 fingerprint of the coordinator's certificate (any common spelling); required for https. */
  certSha256?: string;
  /** Stand-in for the HTTP layer, for tests. */
  transport?: (opts: PostOptions) => Promise<RawReply>;
}

export class CoordinatorClient {
  readonly base: URL;
  /** For the presence WebSocket: the same pinned TLS connection as requests (null for http). */
  readonly connector: Connector | null;
  /** The fingerprint pinned for this URL (lower-case hex), or null over http: the join proof binds it. */
  readonly certSha256: string | null;
  /** The URL's trust, the pinned kept-alive sockets and the JSON requests (platform/net/api-connection.ts). */
  private readonly connection: ApiConnection;
  private session: string | null = null;
  private identity: NodeIdentity | null = null;
  private signer: BodySigner | undefined;

  constructor(
    coordinatorUrl: string | URL,
    /** Only ever used to compute the join's proofs (join-proof.ts): it is never sent. */
    readonly token: string,
    options: CoordinatorClientOptions = {},
  ) {
    this.connection = new ApiConnection(coordinatorUrl, {
      ...(options.certSha256 !== undefined ? { certSha256: options.certSha256 } : {}),
      ...(options.transport ? { transport: options.transport } : {}),
    });
    this.base = this.connection.base;
    this.connector = this.connection.connector;
    this.certSha256 = this.connection.certSha256;
  }

  /** Why this client will not talk to its URL (https without a fingerprint, …); null when it will. */
  trustProblem(): string | null {
    return this.connection.trustProblem();
  }

  /** The session secret sent with every later request; null before a join (and for the join itself). */
  useSession(secret: string | null): void {
    this.session = secret;
  }

  /**
   * The node key that signs every request from now on (the join included, which also presents its public key);
   * null: unsigned, as older agents and the operator CLI speak.
   */
  useIdentity(identity: NodeIdentity | null): void {
    this.identity = identity;
    this.signer = identity ? bodySigner(identity) : undefined;
  }

  /** The auth headers plus, with a node key, a fresh signature of a body-less GET of `url` (the presence upgrade). */
  signedGetHeaders(url: URL): Record<string, string> {
    return { ...this.authHeaders(), ...(this.identity ? signatureHeaders(this.identity, 'GET', url.pathname + url.search, sha256Hex('')) : {}) };
  }

  /** The node key's public half (base64url) that signs the join, or null for an unsigned agent. */
  publicKey(): string | null {
    return this.identity?.publicKey ?? null;
  }

  /** Headers every request carries: once joined, the session's secret (never the join token). */
  authHeaders(): Record<string, string> {
    return this.session ? { [SESSION_HEADER]: this.session } : {};
  }

  /** Frees the kept-alive connections (the agent has stopped). */
  close(): void {
    this.connection.close();
  }

  /** Calls the endpoint `name` of the worker-API table: its method, at the path its builder makes of `params`; never throws. */
  call<K extends Exclude<EndpointName, 'presence' | UploadEndpoint | DownloadEndpoint>>(
    name: K,
    params: EndpointParams<K>,
    body: EndpointBody<K>,
    timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
    /** Besides the auth headers (the join's challenge and proof). */
    headers: Record<string, string> = {},
  ): Promise<ApiReply> {
    const endpoint = workerApi[name];
    const path = (endpoint.path.build as (...p: EndpointParams<K>) => string)(...params);
    // A signed join presents the key that signs it: the coordinator pins it at the node's first join.
    const sent = name === 'join' && this.identity ? { ...(body as object), publicKey: this.identity.publicKey } : body;
    return this.request(endpoint.method as 'GET' | 'POST', path, sent, timeoutMs, headers);
  }

  /** PUTs a file to the binary-upload endpoint `name`, streamed from disk; never throws. */
  async upload<K extends UploadEndpoint>(name: K, params: EndpointParams<K>, upload: FileUpload, idleTimeoutMs = 30_000): Promise<ApiReply> {
    const problem = this.connection.trustProblem();
    if (problem) return { kind: 'untrusted', message: problem };
    const path = (workerApi[name].path.build as (...p: EndpointParams<K>) => string)(...params);
    const url = new URL(path, this.base);
    let raw: RawReply;
    try {
      // The body is streamed, so the signature covers the SHA-256 it announces in the path (the coordinator checks the bytes against it).
      const announced = String(params.at(-1));
      const signed = this.identity ? signatureHeaders(this.identity, 'PUT', url.pathname + url.search, announced) : {};
      raw = await putFile({ url, headers: { ...this.authHeaders(), ...upload.headers, ...signed }, file: upload.file, sizeBytes: upload.sizeBytes, contentType: upload.contentType, idleTimeoutMs, agent: this.connection.agent });
    } catch (error) {
      raw = { kind: 'failed', error };
    }
    return interpretReply(raw, this.base);
  }

  /**
   * GETs the binary-download endpoint `name` into `toFile`, streamed and checked against `expect` (the file is
   * removed unless it is exactly those bytes); never throws.
   */
  async download<K extends DownloadEndpoint>(
    name: K,
    params: EndpointParams<K>,
    toFile: string,
    expect: { sha256: string; bytes: number },
    onBytes?: (received: number) => void,
    idleTimeoutMs = 30_000,
  ): Promise<DownloadResult> {
    const problem = this.connection.trustProblem();
    if (problem) return { kind: 'failed', error: new Error(problem) };
    const url = new URL((workerApi[name].path.build as (...p: EndpointParams<K>) => string)(...params), this.base);
    return downloadFile({ url, headers: this.signedGetHeaders(url), agent: this.connection.agent, toFile, expectSha256: expect.sha256, expectBytes: expect.bytes, idleTimeoutMs, ...(onBytes ? { onBytes } : {}) });
  }

  /** POSTs `body` as JSON to `path`; never throws. */
  post(path: string, body: unknown, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<ApiReply> {
    return this.request('POST', path, body, timeoutMs);
  }

  private request(method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number, headers: Record<string, string> = {}): Promise<ApiReply> {
    return this.connection.request(method, path, body, timeoutMs, { ...this.authHeaders(), ...headers }, this.signer);
  }

  /**
   * The address of this machine's interface that reaches the coordinator: what other workers should use to
   * reach this one (it is on the same network as the coordinator, which is all we know). Also proves the
   * coordinator's port answers before we try to join.
   */
  localAddressTowards(timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<{ ok: true; address: string } | { ok: false; message: string }> {
    const port = Number(this.base.port || (this.base.protocol === 'https:' ? 443 : 80));
    const host = this.base.hostname.replace(/^\[(.*)\]$/, '$1');
    return new Promise((resolve) => {
      const socket = net.connect({ host, port });
      const done = (result: { ok: true; address: string } | { ok: false; message: string }) => {
        socket.destroy();
        resolve(result);
      };
      socket.setTimeout(timeoutMs, () => done({ ok: false, message: `no answer from ${this.base.host} within ${timeoutMs / 1000} s` }));
      socket.once('connect', () => {
        // An IPv4 peer on a dual-stack socket shows as ::ffff:a.b.c.d; normalizeAddress gives the plain form.
        const local = normalizeAddress(socket.localAddress ?? '');
        const address = local ? (local.zone ? `${local.address}%${local.zone}` : local.address) : '';
        done(address ? { ok: true, address } : { ok: false, message: 'could not read the local address of the connection' });
      });
      socket.once('error', (error) => done({ ok: false, message: describeNetworkError(error, this.base) }));
    });
  }
}

/** A TCP port free on this machine right now, for the c10d store this worker may host. */
/**
 * `count` distinct TCP ports free now (1..16), all held open together while they are found so none repeats: one
 * rendezvous store port per GPU, as a machine with several GPUs may host a store for each run it trains.
 */
export async function findFreePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: Math.min(16, Math.max(1, count)) }, () => net.createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject);
            server.listen(0, () => {
              const address = server.address();
              const port = typeof address === 'object' && address ? address.port : 0;
              if (port > 0) resolve(port);
              else reject(new Error('the OS gave no free port'));
            });
          }),
      ),
    );
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('the OS gave no free port'))));
    });
  });
}
