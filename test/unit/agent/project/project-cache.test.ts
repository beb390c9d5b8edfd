/**
 * The project cache on real files: least recently used blobs go first once over the bound (the order kept in
 * the files' mtimes, so a restarted agent keeps it), a pinned blob never goes, an unpacked snapshot that lost a
 * blob to eviction goes with it unless a run uses it; and a disk too small for the snapshot (a real 8 MiB tmpfs)
 * is refused before anything is fetched, with a reason naming what it needs, what is free and where.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentProjects, projectTransport } from '../../../../src-main/agent/project/agent-projects';
import { BlobCache } from '../../../../src-main/platform/projects/blob-cache';
import { systemClock } from '../../../../src-main/platform/ports';
import { removeTree } from '../../../../src-main/platform/projects/snapshot-unpack';
import type { PreparedReport } from '../../../../src-shared/projects/project-protocol';
import { joinedClient, ProjectServer, sha, WORKER_ID } from './project-server';

const dirs: string[] = [];
const servers: ProjectServer[] = [];
const mounts: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-cache-'));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const m of mounts.splice(0)) spawnSync('umount', [m]);
  for (const d of dirs.splice(0)) removeTree(d);
});

/** A blob of `size` bytes put in the cache, last used `ageS` seconds ago. */
function put(cache: BlobCache, text: string, size: number, ageS: number): string {
  const bytes = Buffer.alloc(size, text);
  const hash = sha(bytes);
  const tmp = cache.tempPath();
  writeFileSync(tmp, bytes);
  cache.adopt(tmp, hash);
  const when = new Date(Date.now() - ageS * 1000);
  utimesSync(cache.blobPath(hash), when, when);
  return hash;
}

async function agentProjects(dataDir: string, cacheBytes: number) {
  let key: string | null = null;
  const server = new ProjectServer(() => key);
  servers.push(server);
  const joined = joinedClient(await server.listen(), dataDir);
  key = joined.publicKey;
  const logs: string[] = [];
  const projects = new AgentProjects({ dataDir, cacheBytes, clock: systemClock, log: (l) => logs.push(l), python: () => null, env: {}, ...projectTransport(joined.client, () => ({ workerId: WORKER_ID })) });
  const prepare = async (snapshot: string, runId = 'run-1') => {
    const reports: PreparedReport[] = [];
    await projects.prepare({ kind: 'prepare', runId, snapshot, dataDir: null, dataMode: 'replicate', modules: [] }, (r) => reports.push(r));
    return reports.at(-1)!;
  };
  return { server, projects, logs, prepare };
}

describe('the project cache', () => {
  it('evicts the least recently used first, never a pinned blob, and keeps the order across a restart', () => {
    const root = tempDir();
    const cache = new BlobCache(root, 250);
    const oldest = put(cache, 'a', 100, 300);
    const pinned = put(cache, 'b', 100, 200);
    const newer = put(cache, 'c', 100, 100);
    const newest = put(cache, 'd', 100, 0);
    cache.pin('run:r1', [pinned]);
    expect(cache.evict()).toEqual([oldest, newer]);
    expect(cache.has(pinned) && cache.has(newest)).toBe(true);
    cache.unpin('run:r1');
    cache.touch([pinned]); // used again now: newest of all
    const restarted = new BlobCache(root, 100);
    expect(restarted.evict()).toEqual([newest]);
    expect(restarted.has(pinned)).toBe(true);
  });

  it('removes an unpacked snapshot that lost a blob to eviction, but not one a run uses', async () => {
    const dataDir = tempDir();
    const { server, projects, prepare } = await agentProjects(dataDir, 1000);
    const first = server.add({ 'a.txt': 'a'.repeat(600) });
    const second = server.add({ 'b.txt': 'b'.repeat(600) });
    expect(await prepare(first)).toMatchObject({ status: 'ready' });
    const launched = await projects.launch({ runId: 'run-1', project: { snapshot: first, dataDir: null, dataMode: 'replicate', dataFiles: null } } as never);
    expect(launched).toMatchObject({ cwd: path.join(dataDir, 'projects', 'snapshots', first) });
    expect(await prepare(second, 'run-2')).toMatchObject({ status: 'ready' }); // over the bound, but run-1 pins the first
    expect(readdirSync(path.join(dataDir, 'projects', 'snapshots')).sort()).toEqual([first, second].sort());
    projects.ended('run-1', { exitCode: 1, signal: null }, false);
    const third = server.add({ 'c.txt': 'c'.repeat(600) });
    expect(await prepare(third, 'run-3')).toMatchObject({ status: 'ready' });
    expect(readdirSync(path.join(dataDir, 'projects', 'snapshots')).sort()).toEqual([third]);
  });

  const isRoot = process.getuid?.() === 0;
  it.skipIf(!isRoot)('refuses a snapshot the disk cannot hold before fetching any of it, naming what it needs and where', async () => {
    const dataDir = tempDir();
    mkdirSync(path.join(dataDir, 'projects'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', path.join(dataDir, 'projects')]);
    if (mounted.status !== 0) return; // no mounting here (a container without the capability): nothing to check
    mounts.push(path.join(dataDir, 'projects'));
    const { server, prepare } = await agentProjects(dataDir, 1024 ** 3);
    const snapshot = server.add({ 'weights.bin': 'w'.repeat(12 * 1024 * 1024) });
    const failed = await prepare(snapshot);
    expect(failed.status).toBe('failed');
    expect(failed.detail).toMatch(new RegExp(`^not enough disk for the project: needs 12 MiB, [0-9.]+ MiB free in ${path.join(dataDir, 'projects').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    expect(server.blobRequests).toEqual([]);
    expect(existsSync(path.join(dataDir, 'projects', 'snapshots', snapshot))).toBe(false);
  });
});
