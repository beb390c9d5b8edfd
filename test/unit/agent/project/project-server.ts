/**
 * A coordinator's project routes over real HTTP on 127.0.0.1, for testing the agent's side: it serves a snapshot's
 * manifest and blobs, takes run artifact uploads, wants the session secret on each request and checks each request's
 * signature by the agent's node key (as the real coordinator does: request-signature.ts). It counts what it serves,
 * can be told to send wrong bytes for a blob, and answers uploads 404 a number of times first (as the coordinator
 * did before its handler was wired).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SESSION_HEADER } from '../../../../src-shared/worker-protocol';
import type { ProjectEntry, SnapshotManifest } from '../../../../src-shared/projects/project-protocol';
import { SignatureChecker, signedPartsOf } from '../../../../src-main/core/api/request-signature';
import { manifestHash } from '../../../../src-main/platform/projects/manifest-hash';
import { sortManifestEntries } from '../../../../src-main/platform/projects/manifest-hash';
import { CoordinatorClient } from '../../../../src-main/agent/coordinator-client';
import { loadOrCreateNodeIdentity } from '../../../../src-main/agent/node-identity';

export const SESSION = 'session-secret-for-project-tests';
export const WORKER_ID = 7;

export const sha = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

/** A project as tests write it: path → contents (a string; `{ link }` for a link; `{ exec }` for an executable). */
export type ProjectFiles = Record<string, string | { link: string } | { exec: string }>;

export function manifestOf(files: ProjectFiles): { manifest: SnapshotManifest; hash: string; blobs: Map<string, Buffer> } {
  const blobs = new Map<string, Buffer>();
  const entries: ProjectEntry[] = Object.entries(files).map(([path, v]) => {
    if (typeof v === 'object' && 'link' in v) return { kind: 'link', path, target: v.link };
    const bytes = Buffer.from(typeof v === 'string' ? v : v.exec);
    blobs.set(sha(bytes), bytes);
    return { kind: 'file', path, sha256: sha(bytes), size: bytes.length, executable: typeof v === 'object' };
  });
  const manifest: SnapshotManifest = { version: 1, entries: sortManifestEntries(entries) };
  return { manifest, hash: manifestHash(manifest), blobs };
}

export interface ArtifactUpload {
  runId: string;
  pathSha256: string;
  bytes: Buffer;
}

export class ProjectServer {
  readonly manifests = new Map<string, SnapshotManifest>();
  readonly blobs = new Map<string, Buffer>();
  /** Blobs answered with these bytes instead (a lying or broken source). */
  readonly wrongBytes = new Map<string, Buffer>();
  /** Blobs answered only after this many ms (a transfer still under way when another fails). */
  readonly slowBlobs = new Map<string, number>();
  readonly blobRequests: string[] = [];
  readonly uploads: ArtifactUpload[] = [];
  bytesServed = 0;
  uploadMisses = 0;
  refusedSignatures = 0;
  private server: http.Server | null = null;
  private readonly signatures = new SignatureChecker({ now: () => Date.now() });

  constructor(private readonly publicKey: () => string | null) {}

  add(files: ProjectFiles): string {
    const { manifest, hash, blobs } = manifestOf(files);
    this.manifests.set(hash, manifest);
    for (const [k, v] of blobs) this.blobs.set(k, v);
    return hash;
  }

  async listen(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (req.headers[SESSION_HEADER] !== SESSION) return send(401, { error: 'no session' });
    const url = req.url ?? '';
    const upload = /^\/v1\/workers\/7\/runs\/([^/]+)\/artifact\/([0-9a-f]{64})$/.exec(url);
    try {
      const key = this.publicKey();
      if (key) this.signatures.check({ method: req.method ?? '', target: url, bodySha256Hex: upload ? upload[2]! : sha(body), signed: signedPartsOf(req) }, key, 'worker 7');
    } catch (error) {
      this.refusedSignatures++;
      return send(401, { error: (error as Error).message });
    }
    const manifest = /^\/v1\/workers\/7\/projects\/([0-9a-f]{64})$/.exec(url);
    if (req.method === 'GET' && manifest) {
      const m = this.manifests.get(manifest[1]!);
      return m ? send(200, m) : send(404, { error: 'no such snapshot' });
    }
    const blob = /^\/v1\/workers\/7\/projects\/([0-9a-f]{64})\/blobs\/([0-9a-f]{64})$/.exec(url);
    if (req.method === 'GET' && blob) {
      const bytes = this.wrongBytes.get(blob[2]!) ?? this.blobs.get(blob[2]!);
      if (!bytes) return send(404, { error: 'no such blob' });
      this.blobRequests.push(blob[2]!);
      this.bytesServed += bytes.length;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
      const delayMs = this.slowBlobs.get(blob[2]!) ?? 0;
      if (delayMs > 0) return void setTimeout(() => res.end(bytes), delayMs);
      return void res.end(bytes);
    }
    if (req.method === 'PUT' && upload) {
      if (this.uploadMisses > 0) {
        this.uploadMisses--;
        return send(404, { error: 'this coordinator does not ship projects yet' });
      }
      if (sha(body) !== upload[2]) return send(400, { error: 'the bytes do not match the sha256 in the path' });
      this.uploads.push({ runId: decodeURIComponent(upload[1]!), pathSha256: upload[2]!, bytes: body });
      return send(201, { sha256: upload[2], sizeBytes: body.length, stored: 'new' });
    }
    send(404, { error: `no route ${req.method} ${url}` });
  }
}

/** A joined agent's client: the session secret and a node key (made in `dataDir`) that signs every request. */
export function joinedClient(url: string, dataDir: string): { client: CoordinatorClient; publicKey: string } {
  const client = new CoordinatorClient(url, 'token');
  client.useSession(SESSION);
  const identity = loadOrCreateNodeIdentity(dataDir);
  client.useIdentity(identity);
  return { client, publicKey: identity.publicKey };
}
