/**
 * A worker holding a job claim on a real coordinator on 127.0.0.1 (HTTP API, job service on a temp state.db,
 * the artifact store on disk), joined and heartbeating as the agent does: what the upload benches
 * (abuse-upload-fill.ts, abuse-upload-tarball.ts) attack from. Uploads go through the agent's own client.
 */
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CoordinatorClient } from '../../src-main/agent/coordinator-client';
import { joinOnce } from '../../src-main/agent/join-coordinator';
import type { NodeIdentity } from '../../src-main/agent/node-identity';
import { startCoordinatorHttp } from '../../src-main/core/api/coordinator-http';
import { CoordinatorService } from '../../src-main/core/coordinator/service/coordinator-service';
import { ArtifactStore, type ArtifactStoreOptions } from '../../src-main/core/jobs/artifact-store';
import { JobService } from '../../src-main/core/jobs/job-service';
import { openStateDb } from '../../src-main/core/state/index';
import type { StateDb } from '../../src-main/core/state/state-db';
import { systemClock } from '../../src-main/platform/ports';
import { generateToken } from '../../src-main/platform/tokens';
import type { ClusterConfig } from '../../src-shared/cluster/types';
import { CLAIM_TOKEN_HEADER, formatClaimToken } from '../../src-shared/jobs/job-protocol';

const NODE = 'filler';
const CLUSTER: ClusterConfig = { nodes: [{ name: NODE, host: 'localhost', transport: 'local', gpus: [], max_adapters: 1 }] };

function memoryIdentity(): NodeIdentity {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { publicKey: publicKey.export({ format: 'jwk' }).x!, fingerprint: '', sign: (data) => sign(null, Buffer.from(data), privateKey).toString('base64url') };
}

async function until<T>(what: string, probe: () => T | null | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const found = probe();
    if (found) return found;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface UploadReply {
  status: number;
  message: string;
}

export interface ClaimedWorker {
  db: StateDb;
  storeDir: string;
  /** Uploads `bytes` as the claim's artifact; the HTTP status (0: no answer) and the refusal's text. */
  upload(bytes: Buffer): Promise<UploadReply>;
  /** upload() in two steps: the file written and hashed now, sent when the function returned is called. */
  prepare(bytes: Buffer): () => Promise<UploadReply>;
  /** One heartbeat, answered: its round trip in ms. */
  heartbeat(): Promise<number>;
  close(): Promise<void>;
}

/** Starts a coordinator on 127.0.0.1 (its artifact store with `store`), joins a worker to it and lets it claim one job; close() removes everything. */
export async function startClaimedWorker(store: ArtifactStoreOptions = {}): Promise<ClaimedWorker> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpu-share-bench-upload-'));
  const db = openStateDb(dir);
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const svc = new CoordinatorService({ clock: systemClock, joinToken, operatorToken });
  const storeDir = path.join(dir, 'artifacts');
  const jobs = new JobService({ clock: systemClock, db, artifacts: new ArtifactStore(storeDir, store), cluster: () => CLUSTER, coordinator: svc, notify: () => undefined });
  const api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken, operatorToken, jobs });
  svc.start();
  jobs.start();
  const client = new CoordinatorClient(api.url, joinToken);
  let beat: NodeJS.Timeout | undefined;
  const close = async () => {
    if (beat) clearInterval(beat);
    client.close();
    jobs.stop();
    svc.stop();
    await api.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    // The worker joins as the agent does (over loopback: approved by construction) and keeps its heartbeat up.
    client.useIdentity(memoryIdentity());
    const { joined } = await joinOnce(client, (advertiseHost) => ({
      node: NODE,
      agentVersion: 'bench',
      machineId: 'f'.repeat(32),
      gpus: [],
      cpuCores: 4,
      ramMb: 8192,
      advertiseHost,
      rdzvPort: 29500,
      python: { path: '/usr/bin/python3', torchVersion: '2.3.0' },
    }));
    client.useSession(joined.sessionSecret);
    const heartbeat = async () => {
      const t0 = performance.now();
      await client.call('heartbeat', [joined.workerId], { incarnation: joined.incarnation, progress: null });
      return performance.now() - t0;
    };
    beat = setInterval(() => void heartbeat(), 1000);
    await jobs.submit('fill.toml', '[[jobs]]\nname = "fill"\ncommand = ["train.py"]\nmodel = "tiny-gpt"\nmode = "lora"\n');
    const row = await until('the job to be claimed by the worker', () => db.jobs.list().find((r) => r.status === 'claimed' && r.workerId === joined.workerId));
    const claim = formatClaimToken({ claimId: row.claimId!, attempt: row.attempts });
    const file = path.join(dir, 'upload.tar.gz');
    const prepare = (bytes: Buffer) => {
      fs.writeFileSync(file, bytes);
      const sha = createHash('sha256').update(bytes).digest('hex');
      return async (): Promise<UploadReply> => {
        const reply = await client.upload('uploadArtifact', [joined.workerId, row.id, sha], {
          file,
          sizeBytes: bytes.length,
          contentType: 'application/gzip',
          headers: { [CLAIM_TOKEN_HEADER]: claim },
        });
        return { status: 'status' in reply ? reply.status : 0, message: 'message' in reply ? reply.message : '' };
      };
    };
    const upload = (bytes: Buffer) => prepare(bytes)();
    return { db, storeDir, upload, prepare, heartbeat, close };
  } catch (error) {
    await close();
    throw error;
  }
}
