// A shard-mode launch fetches the data files the plan gives this member — files its prepare left out — from the
// members its latest `prepare` named, over real loopback sockets, not only from the coordinator (issue 23: a slow
// coordinator uplink must not carry every member's shard).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PreparedReport, SnapshotManifest } from '../../../../src-shared/projects/project-protocol';
import type { LaunchPlan } from '../../../../src-shared/worker-protocol';
import { AgentProjects } from '../../../../src-main/agent/project/agent-projects';
import { PeerBlobServer } from '../../../../src-main/agent/project/peer-blob-server';
import { systemClock } from '../../../../src-main/platform/ports';
import { manifestHash } from '../../../../src-main/platform/projects/manifest-hash';
import { shellPlan } from '../agent-fixtures';
import { countingCoordinator, sha, storeHolding } from './peer-fixtures';

const key = randomBytes(32).toString('base64url');
const code = Buffer.from('print("train")\n');
const shard = randomBytes(200_000);
const manifest: SnapshotManifest = {
  version: 1,
  entries: [
    { kind: 'file', path: 'train.py', sha256: sha(code), size: code.length, executable: false },
    { kind: 'file', path: 'data/part-0.bin', sha256: sha(shard), size: shard.length, executable: false },
  ],
};
const snapshot = manifestHash(manifest);

let root: string;
let peer: PeerBlobServer;
let port: number;
const logs: string[] = [];

beforeEach(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'launch-from-peers-'));
  // Another member already holds the shard (it trained on it in an earlier generation).
  const held = storeHolding(path.join(root, 'peer'), manifest, [shard], (l) => logs.push(l));
  peer = new PeerBlobServer({ store: () => held, log: (l) => logs.push(l) });
  port = await peer.listen(0, '127.0.0.1');
  peer.allow(snapshot, key);
});

afterEach(async () => {
  await peer.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('a shard launch', () => {
  it("fetches its data files from the peers its prepare named, the rest from the coordinator", async () => {
    const coord = countingCoordinator([manifest], [code, shard]);
    const projects = new AgentProjects({
      dataDir: path.join(root, 'member'), cacheBytes: 1 << 30, clock: systemClock, log: (l) => logs.push(l),
      source: () => coord, python: () => null, env: {}, upload: () => Promise.reject(new Error('no uploads here')),
    });
    const reports: PreparedReport[] = [];
    await projects.prepare({ kind: 'prepare', runId: 'run-1', snapshot, dataDir: 'data', dataMode: 'shard', modules: [], peers: [{ workerId: 2, node: 'beta', host: '127.0.0.1', port }], peerKey: key }, (r) => reports.push(r));
    expect(reports.at(-1)?.status).toBe('ready');
    expect(coord.served).toEqual([sha(code)]); // the prepare fetched the code only: shard files come with a plan

    const plan: LaunchPlan = { ...shellPlan(''), runId: 'run-1', command: ['train.py'], project: { snapshot, dataDir: 'data', dataMode: 'shard', dataFiles: ['part-0.bin'] } };
    const ready = await projects.launch(plan);
    expect(ready).not.toHaveProperty('error');
    expect(coord.served).toEqual([sha(code)]); // the shard came from beta
    await expect.poll(() => peer.counters.bytes).toBe(shard.length); // counted once the server saw the send through
    expect(logs.some((l) => /run run-1: fetched 1 file .* \(beta 195\.3 KiB\)/.test(l))).toBe(true);
    projects.close();
  });
});
