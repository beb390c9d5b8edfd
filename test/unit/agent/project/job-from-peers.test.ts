// An adapter job's project fetched from the members its runJob names, over real loopback sockets, not from the
// coordinator (issue 23: a slow coordinator uplink must not carry every job's copy), and the job's worker then
// serves its copy, under the same snapshot key, to the next job's worker.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SnapshotManifest } from '../../../../src-shared/projects/project-protocol';
import { AgentProjects } from '../../../../src-main/agent/project/agent-projects';
import { PeerBlobServer } from '../../../../src-main/agent/project/peer-blob-server';
import type { ProjectSource } from '../../../../src-main/agent/project/project-source';
import { systemClock } from '../../../../src-main/platform/ports';
import { manifestHash } from '../../../../src-main/platform/projects/manifest-hash';
import { countingCoordinator, sha, storeHolding } from './peer-fixtures';

const key = randomBytes(32).toString('base64url');
const code = Buffer.from('print("train")\n');
const weights = randomBytes(300_000);
const manifest: SnapshotManifest = {
  version: 1,
  entries: [
    { kind: 'file', path: 'train.py', sha256: sha(code), size: code.length, executable: false },
    { kind: 'file', path: 'base.bin', sha256: sha(weights), size: weights.length, executable: false },
  ],
};
const snapshot = manifestHash(manifest);

let root: string;
let holder: PeerBlobServer;
let holderPort: number;
const logs: string[] = [];

const agent = (name: string, coord: ProjectSource): AgentProjects =>
  new AgentProjects({ dataDir: path.join(root, name), cacheBytes: 1 << 30, clock: systemClock, log: (l) => logs.push(`${name}: ${l}`), source: () => coord, python: () => null, env: {}, upload: () => Promise.reject(new Error('no uploads here')) });

beforeEach(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'job-from-peers-'));
  logs.length = 0;
  // A worker that ran a job of this snapshot before: it holds every file and was given the key.
  const held = storeHolding(path.join(root, 'holder'), manifest, [code, weights], (l) => logs.push(l));
  holder = new PeerBlobServer({ store: () => held, log: (l) => logs.push(l) });
  holderPort = await holder.listen(0, '127.0.0.1');
  holder.allow(snapshot, key);
});

afterEach(async () => {
  await holder.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe("a job's project", () => {
  it('comes from the peers its runJob names, and its worker serves it on to the next job', async () => {
    const coord = countingCoordinator([manifest], [code, weights]);
    const second = agent('second', coord);
    const job = { jobId: 'a'.repeat(64), attempt: 1, name: 'lr-3e-4' };
    const ready = await second.readyJob(job, { snapshot, peers: [{ workerId: 1, node: 'alpha', host: '127.0.0.1', port: holderPort }], peerKey: key });
    expect(ready).not.toHaveProperty('error');
    expect(coord.served).toEqual([]); // every byte from alpha
    expect(fs.readFileSync(path.join((ready as { cwd: string }).cwd, 'train.py'))).toEqual(code);
    expect(logs.some((l) => /second: job lr-3e-4: snapshot \w{6}… fetched 2 files .* \(alpha 293 KiB\)/.test(l))).toBe(true);
    await expect.poll(() => holder.counters.bytes).toBe(code.length + weights.length);

    // The next job's worker is told of the second (it holds a claim of the same snapshot) and fetches from it.
    const port = await second.listen();
    const third = agent('third', coord);
    const again = await third.readyJob({ ...job, jobId: 'b'.repeat(64) }, { snapshot, peers: [{ workerId: 2, node: 'beta', host: '127.0.0.1', port: port! }], peerKey: key });
    expect(again).not.toHaveProperty('error');
    expect(coord.served).toEqual([]);
    await expect.poll(() => second.blobServer.counters.bytes).toBe(code.length + weights.length);
    [second, third].forEach((p) => p.close());
  });

  it('comes from the coordinator when no peer is named (the first job of a sweep)', async () => {
    const coord = countingCoordinator([manifest], [code, weights]);
    const first = agent('first', coord);
    const ready = await first.readyJob({ jobId: 'c'.repeat(64), attempt: 1, name: 'first' }, { snapshot, peerKey: key });
    expect(ready).not.toHaveProperty('error');
    expect(coord.served.sort()).toEqual([sha(code), sha(weights)].sort());
    first.close();
  });
});
