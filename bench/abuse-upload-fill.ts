/**
 * The upload fill of issue 14 (item 6): a worker holding one job claim uploads many distinct tarballs under it
 * and never completes the job. Before the fix, forty 8 MiB uploads were all kept: 320 MiB that no artifact index
 * refers to, never cleaned up. Now a claim's new upload replaces its previous one (and what no completion indexes
 * goes after a grace). Runs against a real coordinator on 127.0.0.1 (HTTP API, job service on a temp state.db,
 * the artifact store on disk), the worker joined and heartbeating as the agent does, uploads through the agent's
 * own client; the figures are the MiB on disk outside the index before and after the fill.
 *
 *   node scripts/run-ts.mjs bench/abuse-upload-fill.ts [--upload-count 40] [--upload-mib 8]
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { CoordinatorClient } from '../src-main/agent/coordinator-client';
import { joinOnce } from '../src-main/agent/join-coordinator';
import type { NodeIdentity } from '../src-main/agent/node-identity';
import { startCoordinatorHttp } from '../src-main/core/api/coordinator-http';
import { generateToken } from '../src-main/platform/tokens';
import { CoordinatorService } from '../src-main/core/coordinator/coordinator-service';
import { ArtifactStore } from '../src-main/core/jobs/artifact-store';
import { JobService } from '../src-main/core/jobs/job-service';
import { openStateDb } from '../src-main/core/state/index';
import { systemClock } from '../src-main/platform/ports';
import { CLAIM_TOKEN_HEADER, formatClaimToken } from '../src-shared/jobs/job-protocol';
import type { ClusterConfig } from '../src-shared/cluster/types';
import { MB, runMain, startedAs } from './lib/abuse-harness';
import { intFlag } from './lib/flags';
import { printTable } from './lib/stats';

export const UPLOAD_FILL_HEADER = ['attack', 'coordinator now', 'before the fix', 'took'];

const NODE = 'filler';
const CLUSTER: ClusterConfig = { nodes: [{ name: NODE, host: 'localhost', transport: 'local', gpus: [], max_adapters: 1 }] };

function memoryIdentity(): NodeIdentity {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { publicKey: publicKey.export({ format: 'jwk' }).x!, fingerprint: '', sign: (data) => sign(null, Buffer.from(data), privateKey).toString('base64url') };
}

/** A valid .tar.gz holding `body` as the file `name` (stored, not compressed), so the coordinator's inspection takes it. */
function tarball(name: string, body: Buffer): Buffer {
  const header = Buffer.alloc(512);
  const put = (offset: number, text: string) => Buffer.from(text).copy(header, offset);
  const octal = (offset: number, length: number, value: number) => put(offset, `${value.toString(8).padStart(length - 1, '0')}\0`);
  put(0, name);
  octal(100, 8, 0o644);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, body.length);
  octal(136, 12, 0);
  header.fill(0x20, 148, 156);
  put(156, '0');
  put(257, 'ustar\0');
  put(263, '00');
  put(148, `${header.reduce((a, b) => a + b, 0).toString(8).padStart(6, '0')}\0 `);
  const pad = Buffer.alloc((512 - (body.length % 512)) % 512);
  return gzipSync(Buffer.concat([header, body, pad, Buffer.alloc(1024)]), { level: 0 });
}

/** MiB of stored tarballs that the artifact index does not refer to, and how many. */
function outsideIndex(storeDir: string, indexed: (sha: string) => boolean): { mib: number; files: number } {
  let bytes = 0;
  let files = 0;
  const byHash = path.join(storeDir, 'sha256');
  for (const sub of fs.readdirSync(byHash)) {
    for (const name of fs.readdirSync(path.join(byHash, sub))) {
      if (indexed(name.replace('.tar.gz', ''))) continue;
      bytes += fs.statSync(path.join(byHash, sub, name)).size;
      files++;
    }
  }
  return { mib: bytes / MB, files };
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

/** Runs the fill against a fresh coordinator on 127.0.0.1; one table row. */
export async function uploadFill(opts: { uploads: number; mib: number }): Promise<string[][]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpu-share-bench-fill-'));
  const db = openStateDb(dir);
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const svc = new CoordinatorService({ clock: systemClock, joinToken, operatorToken });
  const storeDir = path.join(dir, 'artifacts');
  const jobs = new JobService({ clock: systemClock, db, artifacts: new ArtifactStore(storeDir), cluster: () => CLUSTER, coordinator: svc, notify: () => undefined });
  const api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken, operatorToken, jobs });
  svc.start();
  jobs.start();
  const client = new CoordinatorClient(api.url, joinToken);
  let beat: NodeJS.Timeout | undefined;
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
    beat = setInterval(() => void client.call('heartbeat', [joined.workerId], { incarnation: joined.incarnation, progress: null }), 1000);
    await jobs.submit('fill.toml', '[[jobs]]\nname = "fill"\ncommand = ["train.py"]\nmodel = "tiny-gpt"\nmode = "lora"\n');
    const row = await until('the job to be claimed by the worker', () => db.jobs.list().find((r) => r.status === 'claimed' && r.workerId === joined.workerId));
    const claim = formatClaimToken({ claimId: row.claimId!, attempt: row.attempts });

    const indexed = (sha: string) => db.artifacts.has(sha);
    const before = outsideIndex(storeDir, indexed);
    const weights = randomBytes(opts.mib * MB);
    const file = path.join(dir, 'upload.tar.gz');
    const statuses = new Map<number, number>();
    const t0 = performance.now();
    for (let i = 0; i < opts.uploads; i++) {
      const bytes = tarball(`fill-${i}.bin`, weights); // distinct tarballs, same size
      fs.writeFileSync(file, bytes);
      const sha = createHash('sha256').update(bytes).digest('hex');
      const reply = await client.upload('uploadArtifact', [joined.workerId, row.id, sha], {
        file,
        sizeBytes: bytes.length,
        contentType: 'application/gzip',
        headers: { [CLAIM_TOKEN_HEADER]: claim },
      });
      const status = 'status' in reply ? reply.status : 0;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    const seconds = (performance.now() - t0) / 1000;
    const after = outsideIndex(storeDir, indexed);
    const answered = [...statuses].map(([status, n]) => `${n}× ${status || 'no answer'}`).join(', ');
    return [
      [
        `${opts.uploads} distinct ${opts.mib} MiB uploads under one claim, never completed`,
        `outside the index: ${before.mib.toFixed(0)} MiB (${before.files} files) before → ${after.mib.toFixed(1)} MiB (${after.files} file${after.files === 1 ? '' : 's'}) after; uploads answered ${answered}; the rest removed after the 15 min grace`,
        `all ${opts.uploads} kept: ${opts.uploads * opts.mib} MiB in no index, never cleaned up`,
        `${seconds.toFixed(1)} s`,
      ],
    ];
  } finally {
    if (beat) clearInterval(beat);
    client.close();
    jobs.stop();
    svc.stop();
    await api.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (startedAs('abuse-upload-fill.ts')) {
  runMain(async () => {
    const rows = await uploadFill({ uploads: intFlag('upload-count', 40, 1, 10_000), mib: intFlag('upload-mib', 8, 1, 1024) });
    printTable(UPLOAD_FILL_HEADER, rows);
  });
}
