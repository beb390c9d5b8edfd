/** A real coordinator API on loopback and node keys made in temp folders, for the identity tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { loadOrCreateNodeIdentity, type MachineIdentitySource, type NodeIdentity } from '../../../src-main/agent/node-identity';
import { sha256Hex, signatureHeaders } from '../../../src-main/agent/request-signer';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { apiPaths, SESSION_HEADER, type JoinRequest } from '../../../src-shared/worker-protocol';
import { FakeClock } from '../coordinator/fake-clock';
import { joinProofHeaders } from '../api/join-proof-client';

/** The publicKey a join body presents, if it is one. */
function publicKeyIn(body: string): string | undefined {
  try {
    const key = (JSON.parse(body) as { publicKey?: unknown }).publicKey;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

export const JOIN = 'join-' + 'e'.repeat(24);
export const OPERATOR = 'op-' + 'f'.repeat(24);

const dirs: string[] = [];
const servers: CoordinatorHttp[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

export function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-identity-'));
  dirs.push(dir);
  return dir;
}

/** A machine as node-identity.ts sees it: the id its key is bound to. */
export function machine(id: string, name = `host-${id}`): MachineIdentitySource {
  return { id: () => id, name: () => name };
}

/** A fresh node key in its own data folder. */
export function newIdentity(machineId = 'machine-a'): NodeIdentity {
  return loadOrCreateNodeIdentity(tempDir(), machine(machineId));
}

export async function startCoordinator(service?: CoordinatorService): Promise<{ svc: CoordinatorService; api: CoordinatorHttp }> {
  const svc = service ?? new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
  const api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR });
  servers.push(api);
  return { svc, api };
}

export function joinBody(node: string, extra: Partial<JoinRequest> = {}): JoinRequest {
  return {
    node,
    agentVersion: 'test',
    machineId: `machine-${node}`.padEnd(24, 'm'),
    gpus: [],
    cpuCores: 4,
    ramMb: 8192,
    advertiseHost: '127.0.0.1',
    rdzvPort: 29500,
    python: null,
    ...extra,
  };
}

export interface RawRequest {
  method?: 'POST' | 'GET';
  path: string;
  body?: string;
  session?: string;
  /** Signs with this key; `signAs` changes what is signed (to forge a mismatch). */
  identity?: NodeIdentity;
  signAs?: { path?: string; body?: string; time?: number };
  headers?: Record<string, string>;
}

/** One request over real HTTP, its signature made as the agent makes it (or deliberately not matching). */
export async function send(api: CoordinatorHttp, r: RawRequest): Promise<{ status: number; error: string | undefined; json: Record<string, unknown> | null; headers: Record<string, string> }> {
  const method = r.method ?? 'POST';
  const body = r.body ?? '';
  const headers: Record<string, string> = { authorization: `Bearer ${JOIN}`, 'content-type': 'application/json', ...(r.session ? { [SESSION_HEADER]: r.session } : {}) };
  // A join proves the join token by a challenge bound to the key it presents (join-proof.ts).
  if (r.path === '/v1/join' && method === 'POST') Object.assign(headers, await joinProofHeaders(api.url, JOIN, { nodePublicKey: publicKeyIn(body) }));
  if (r.identity) Object.assign(headers, signatureHeaders(r.identity, method, r.signAs?.path ?? r.path, sha256Hex(r.signAs?.body ?? body), r.signAs?.time ?? Date.now()));
  Object.assign(headers, r.headers ?? {});
  const res = await fetch(api.url + r.path, { method, headers, ...(method === 'POST' ? { body } : {}) });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  return { status: res.status, error: json?.error as string | undefined, json, headers };
}

/** A join of `node` presenting and signed by `identity`'s key. */
export const signedJoin = (api: CoordinatorHttp, node: string, identity: NodeIdentity) =>
  send(api, { path: apiPaths.join, body: JSON.stringify(joinBody(node, { publicKey: identity.publicKey })), identity });
