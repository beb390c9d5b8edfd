// Snapshots in an agent's cache count as held (issue 23): an agent restarted on a data folder that holds an earlier
// job's snapshot advertises it in its heartbeat (the most recently used first, at most MAX_HELD_SNAPSHOTS), and on
// `serveSnapshot` serves it, over real loopback sockets, to a member that proves the snapshot's current key; a
// snapshot it no longer holds is not served.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_HELD_SNAPSHOTS, type ProjectFileEntry, type SnapshotManifest } from '../../../../src-shared/projects/project-protocol';
import { heartbeatRequestSchema } from '../../../../src-shared/worker-protocol';
import { AgentProjects } from '../../../../src-main/agent/project/agent-projects';
import { peerSource } from '../../../../src-main/agent/project/peer-source';
import type { ProjectSource } from '../../../../src-main/agent/project/project-source';
import { countingCoordinator, sha } from './peer-fixtures';
import { systemClock } from '../../../../src-main/platform/ports';
import { manifestHash } from '../../../../src-main/platform/projects/manifest-hash';

const newKey = (): string => randomBytes(32).toString('base64url');
const code = Buffer.from('print("train")\n');
const weights = randomBytes(200_000);
const manifestOf = (extra: string): SnapshotManifest => ({
  version: 1,
  entries: [
    { kind: 'file', path: 'train.py', sha256: sha(code), size: code.length, executable: false },
    { kind: 'file', path: 'base.bin', sha256: sha(weights), size: weights.length, executable: false },
    { kind: 'file', path: 'note.txt', sha256: sha(Buffer.from(extra)), size: extra.length, executable: false },
  ],
});

let root: string;
const logs: string[] = [];
const open: AgentProjects[] = [];

const coordinator = (manifests: SnapshotManifest[]) => countingCoordinator(manifests, [code, weights, ...notes.values()]);
const notes = new Map<string, Buffer>();
const manifestFor = (n: number): SnapshotManifest => {
  const note = Buffer.from(`snapshot ${n}\n`);
  notes.set(sha(note), note);
  return manifestOf(note.toString());
};

const agent = (name: string, coord: ProjectSource): AgentProjects => {
  const p = new AgentProjects({ dataDir: path.join(root, name), cacheBytes: 1 << 30, clock: systemClock, log: (l) => logs.push(`${name}: ${l}`), source: () => coord, python: () => null, env: {}, upload: () => Promise.reject(new Error('no uploads here')) });
  open.push(p);
  return p;
};
const job = (n: number) => ({ jobId: n.toString(16).padStart(64, '0'), attempt: 1, name: `job-${n}` });

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'cache-peers-'));
  logs.length = 0;
});

afterEach(() => {
  open.splice(0).forEach((p) => p.close());
  fs.rmSync(root, { recursive: true, force: true });
});

describe('a snapshot in the cache', () => {
  it('is advertised after a restart and served to a member that proves its new key', async () => {
    const manifest = manifestFor(0);
    const snapshot = manifestHash(manifest);
    const coord = coordinator([manifest]);
    const earlier = agent('beta', coord);
    expect(await earlier.readyJob(job(1), { snapshot })).not.toHaveProperty('error');
    earlier.releaseJob(job(1));
    earlier.close();

    // The agent restarts (a new process: no key held); the coordinator restarted too (a new key).
    const beta = agent('beta', coord);
    expect(beta.beat()).toEqual({ snapshots: [snapshot] });
    const port = await beta.listen();
    const key = newKey();
    beta.serve({ kind: 'serveSnapshot', snapshot, peerKey: key });
    expect(logs).toContain(`beta: instruction: serve snapshot ${snapshot.slice(0, 6)}… from the cache to other members that prove its key`);
    const served = coord.served.length;
    const gamma = agent('gamma', coord);
    const ready = await gamma.readyJob(job(2), { snapshot, peers: [{ workerId: 2, node: 'beta', host: '127.0.0.1', port: port! }], peerKey: key });
    expect(ready).not.toHaveProperty('error');
    expect(coord.served.length).toBe(served); // every byte from beta's cache
    await expect.poll(() => beta.blobServer.counters.files).toBe(3);

    // A snapshot it does not hold is not served: the fetcher's files come from the coordinator.
    const other = manifestFor(1);
    const otherSnapshot = manifestHash(other);
    const coord2 = coordinator([other]);
    beta.serve({ kind: 'serveSnapshot', snapshot: otherSnapshot, peerKey: key });
    expect(logs.at(-1)).toBe(`beta: instruction: serve snapshot ${otherSnapshot.slice(0, 6)}… to other members: not held here any more`);
    const delta = agent('delta', coord2);
    expect(await delta.readyJob(job(3), { snapshot: otherSnapshot, peers: [{ workerId: 2, node: 'beta', host: '127.0.0.1', port: port! }], peerKey: key })).not.toHaveProperty('error');
    expect(coord2.served).toHaveLength(3);
  });

  it('of an earlier version of the project serves the files the new one shares with it, and no others', async () => {
    const before = manifestFor(10);
    const after = manifestFor(11); // the same code and weights, another note
    const coord = coordinator([before, after]);
    const beta = agent('beta', coord);
    expect(await beta.readyJob(job(10), { snapshot: manifestHash(before) })).not.toHaveProperty('error');
    const port = await beta.listen();
    const key = newKey();
    const snapshot = manifestHash(after);
    beta.serve({ kind: 'serveSnapshot', snapshot, peerKey: key, blobs: [sha(code), sha(weights)] });
    expect(logs).toContain(`beta: instruction: serve snapshot ${snapshot.slice(0, 6)}… (the 2 files it shares with a snapshot in the cache) to other members that prove its key`);
    const served = coord.served.length;
    const gamma = agent('gamma', coord);
    expect(await gamma.readyJob(job(11), { snapshot, peers: [{ workerId: 2, node: 'beta', host: '127.0.0.1', port: port! }], peerKey: key })).not.toHaveProperty('error');
    const noteOf = (m: SnapshotManifest) => m.entries.find((e): e is ProjectFileEntry => e.kind === 'file' && e.path === 'note.txt')!;
    expect(coord.served.slice(served)).toEqual([noteOf(after).sha256]); // only the new note
    await expect.poll(() => beta.blobServer.counters.files).toBe(2);
    // Under the new snapshot's key, a file of the earlier one only is not served, though beta holds it.
    const fetcher = peerSource({ coordinator: coord, snapshot, peers: [{ workerId: 2, node: 'beta', host: '127.0.0.1', port: port! }], key, log: () => undefined });
    const earlierNote = noteOf(before);
    const got = await fetcher.blob(snapshot, earlierNote.sha256, earlierNote.size, path.join(root, 'probe'), () => undefined);
    fetcher.close();
    expect(got.kind).toBe('ok');
    expect(fetcher.counts).toEqual({ peers: 0, coordinator: earlierNote.size });
  });

  it('is advertised newest first, at most MAX_HELD_SNAPSHOTS of them, which a heartbeat accepts (one more it refuses)', async () => {
    const manifests = Array.from({ length: MAX_HELD_SNAPSHOTS + 3 }, (_, i) => manifestFor(100 + i));
    const coord = coordinator(manifests);
    const beta = agent('beta', coord);
    for (const [i, m] of manifests.entries()) {
      expect(await beta.readyJob(job(100 + i), { snapshot: manifestHash(m) })).not.toHaveProperty('error');
      // Folder times are what orders them: set them apart (a fast disk may give two folders the same time).
      const folder = path.join(root, 'beta', 'projects', 'snapshots', manifestHash(m));
      fs.utimesSync(folder, new Date(1_700_000_000_000 + i * 1000), new Date(1_700_000_000_000 + i * 1000));
    }
    const advertised = beta.beat().snapshots;
    expect(advertised).toHaveLength(MAX_HELD_SNAPSHOTS);
    expect(advertised).toEqual(manifests.map((m) => manifestHash(m)).reverse().slice(0, MAX_HELD_SNAPSHOTS));
    expect(heartbeatRequestSchema.safeParse({ incarnation: 1, snapshots: advertised }).success).toBe(true);
    expect(heartbeatRequestSchema.safeParse({ incarnation: 1, snapshots: [...advertised, manifestHash(manifests[0]!)] }).success).toBe(false);
  });
});
