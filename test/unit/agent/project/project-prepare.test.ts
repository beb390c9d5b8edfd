/**
 * The `prepare` instruction on a real agent data folder, against real HTTP on loopback (signed requests): the
 * manifest checked by its hash, blobs fetched once and verified (wrong bytes refused), the snapshot unpacked
 * read-only with its inside link, a second prepare fetching nothing, a corrupt cached blob named and fetched
 * again, shard mode leaving the data folder out, and the module check with the real /usr/bin/python3.
 */
import { chmodSync, existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PrepareProjectInstruction, PreparedReport, PythonModuleCheck } from '../../../../src-shared/projects/project-protocol';
import { AgentProjects, projectTransport } from '../../../../src-main/agent/project/agent-projects';
import { systemClock } from '../../../../src-main/platform/ports';
import { removeTree } from '../../../../src-main/platform/projects/snapshot-unpack';
import { joinedClient, ProjectServer, sha, WORKER_ID, type ProjectFiles } from './project-server';

const FILES: ProjectFiles = {
  'train.py': 'import mylib\nprint(mylib.X)\n',
  'mylib.py': 'X = 41\n',
  'tools/run.sh': { exec: '#!/bin/sh\necho hi\n' },
  'tools/alias.py': { link: '../mylib.py' },
  'data/a.jsonl': '{"a": 1}\n',
  'data/b.jsonl': '{"b": 2}\n',
};

let dir: string;
let server: ProjectServer;
let projects: AgentProjects;
let logs: string[];
let reports: PreparedReport[];

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-prepare-'));
  let publicKey: string | null = null;
  server = new ProjectServer(() => publicKey);
  const url = await server.listen();
  const joined = joinedClient(url, dir);
  publicKey = joined.publicKey;
  logs = [];
  reports = [];
  const transport = projectTransport(joined.client, () => ({ workerId: WORKER_ID }));
  projects = new AgentProjects({ dataDir: dir, cacheBytes: 1024 ** 3, clock: systemClock, log: (l) => logs.push(l), python: () => '/usr/bin/python3', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, ...transport });
});

afterEach(async () => {
  await server.close();
  removeTree(dir);
});

function instruction(snapshot: string, over: Partial<PrepareProjectInstruction> = {}): PrepareProjectInstruction {
  return { kind: 'prepare', runId: 'run-1', snapshot, dataDir: 'data', dataMode: 'replicate', modules: [], ...over };
}

async function prepare(snapshot: string, over: Partial<PrepareProjectInstruction> = {}): Promise<PreparedReport> {
  await projects.prepare(instruction(snapshot, over), (r) => reports.push(r));
  return reports.at(-1)!;
}

const snapshotDir = (name: string) => path.join(dir, 'projects', 'snapshots', name);
const mode = (p: string) => lstatSync(p).mode & 0o777;

describe('prepare', () => {
  it('fetches each file once, verified, and unpacks the snapshot read-only with its inside link; a second prepare fetches nothing', async () => {
    const hash = server.add(FILES);
    const ready = await prepare(hash);
    expect(ready).toMatchObject({ type: 'prepared', runId: 'run-1', snapshot: hash, status: 'ready' });
    const total = [...server.blobs.values()].reduce((sum, b) => sum + b.length, 0);
    expect(ready.detail).toBe(`fetched 5 files (${total} B) from the coordinator`);
    expect(server.refusedSignatures).toBe(0);
    expect(server.blobRequests.sort()).toEqual([...server.blobs.keys()].sort());
    const fetching = reports.filter((r) => r.status === 'fetching');
    expect(fetching[0]).toMatchObject({ bytesDone: 0, bytesTotal: total });
    expect(fetching.at(-1)).toMatchObject({ bytesDone: total, bytesTotal: total });
    const folder = snapshotDir(hash);
    expect(readFileSync(path.join(folder, 'train.py'), 'utf8')).toBe(FILES['train.py']);
    expect(mode(path.join(folder, 'train.py'))).toBe(0o444);
    expect(mode(path.join(folder, 'tools/run.sh'))).toBe(0o555);
    expect(mode(folder)).toBe(0o555);
    expect(mode(path.join(folder, 'tools'))).toBe(0o555);
    expect(lstatSync(path.join(folder, 'tools/alias.py')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(folder, 'tools/alias.py'))).toBe('../mylib.py');
    expect(readFileSync(path.join(folder, 'tools/alias.py'), 'utf8')).toBe('X = 41\n');
    expect(readdirSync(path.join(dir, 'projects', 'snapshots'))).toEqual([hash]); // no temporary folder left

    const served = server.bytesServed;
    const again = await prepare(hash, { runId: 'run-2' });
    expect(again).toMatchObject({ runId: 'run-2', status: 'ready', detail: `snapshot ${hash.slice(0, 6)}… already here` });
    expect(server.bytesServed).toBe(served);
    expect(logs).toContain(`snapshot ${hash.slice(0, 6)}… already here: nothing fetched`);
  });

  it('refuses a blob whose bytes are not its sha256: nothing kept, the file named', async () => {
    const hash = server.add(FILES);
    const good = sha(FILES['data/b.jsonl'] as string);
    server.wrongBytes.set(good, Buffer.from('{"b": 3}\n'));
    const failed = await prepare(hash);
    expect(failed.status).toBe('failed');
    expect(failed.detail).toContain('the coordinator sent other bytes for data/b.jsonl');
    expect(existsSync(path.join(dir, 'projects', 'blobs', good.slice(0, 2), good))).toBe(false);
    expect(readdirSync(path.join(dir, 'projects', 'snapshots'))).toEqual([]);
    expect(readdirSync(path.join(dir, 'projects', 'tmp'))).toEqual([]);
  });

  it('a failed fetch is reported once the transfers under way have ended: nothing left writing into the cache', async () => {
    const files: ProjectFiles = { 'train.py': 'print(1)\n', 'data/b.jsonl': '{"b": 2}\n' };
    const hash = server.add(files);
    const slow = sha(files['train.py'] as string);
    const wrong = sha(files['data/b.jsonl'] as string);
    server.slowBlobs.set(slow, 1500);
    server.wrongBytes.set(wrong, Buffer.from('{"b": 3}\n'));
    const failed = await prepare(hash, { dataDir: null });
    expect(failed.status).toBe('failed');
    expect(failed.detail).toContain('other bytes for data/b.jsonl');
    // Both were fetched at once; the slow one had ended (and was kept, verified) before the failure was reported.
    expect(existsSync(path.join(dir, 'projects', 'blobs', slow.slice(0, 2), slow))).toBe(true);
    expect(existsSync(path.join(dir, 'projects', 'blobs', wrong.slice(0, 2), wrong))).toBe(false);
    expect(readdirSync(path.join(dir, 'projects', 'tmp'))).toEqual([]);
  });

  it('refuses a manifest that does not hash to the snapshot asked for', async () => {
    const hash = server.add(FILES);
    const other = 'f'.repeat(64);
    server.manifests.set(other, server.manifests.get(hash)!);
    const failed = await prepare(other);
    expect(failed).toMatchObject({ status: 'failed' });
    expect(failed.detail).toBe(`the coordinator sent a manifest whose hash is ${hash.slice(0, 12)}…, not snapshot ${other.slice(0, 12)}…: not used`);
    expect(server.blobRequests).toEqual([]);
  });

  it('refuses to unpack a link that leads outside the folder', async () => {
    const hash = server.add({ 'train.py': 'pass\n', 'secrets': { link: '../../../etc/passwd' } });
    const failed = await prepare(hash, { dataDir: null });
    expect(failed.status).toBe('failed');
    expect(failed.detail).toContain('links leading outside its folder (secrets -> ../../../etc/passwd)');
    expect(readdirSync(path.join(dir, 'projects', 'snapshots'))).toEqual([]);
  });

  it('names a corrupt cached blob, drops it and fetches it again', async () => {
    const hash = server.add(FILES);
    await prepare(hash);
    const lib = sha(FILES['mylib.py'] as string);
    const blob = path.join(dir, 'projects', 'blobs', lib.slice(0, 2), lib);
    chmodSync(blob, 0o644);
    writeFileSync(blob, 'X = 666\n');
    const requests = server.blobRequests.length;
    const ready = await prepare(hash);
    expect(ready.status).toBe('ready');
    expect(logs).toContain(`project file mylib.py (blob ${lib.slice(0, 12)}…) in the cache no longer matches its sha256: dropped, fetching it again`);
    expect(server.blobRequests.slice(requests)).toEqual([lib]);
    expect(readFileSync(path.join(snapshotDir(hash), 'mylib.py'), 'utf8')).toBe('X = 41\n');
  });

  it('leaves the data folder out in shard mode', async () => {
    const hash = server.add(FILES);
    const ready = await prepare(hash, { dataMode: 'shard' });
    expect(ready.status).toBe('ready');
    const data = [sha(FILES['data/a.jsonl'] as string), sha(FILES['data/b.jsonl'] as string)];
    expect(server.blobRequests.filter((b) => data.includes(b))).toEqual([]);
    const [name] = readdirSync(path.join(dir, 'projects', 'snapshots'));
    expect(name).toMatch(new RegExp(`^${hash}-without-`));
    expect(readdirSync(snapshotDir(name!)).sort()).toEqual(['mylib.py', 'tools', 'train.py']);
  });

  it("checks the modules with the agent's Python: all that fail are named with where they were asked for", async () => {
    const hash = server.add(FILES);
    const ok: PythonModuleCheck[] = [{ module: 'json', source: 'requirements.txt line 1' }, { module: 'mylib', source: '--python-check' }];
    expect(await prepare(hash, { modules: ok })).toMatchObject({ status: 'ready' });
    const bad: PythonModuleCheck[] = [...ok, { module: 'nonexistent_mod_xyz', source: 'requirements.txt line 3' }, { module: 'another_missing_mod', source: '--python-check' }];
    const failed = await prepare(hash, { modules: bad });
    expect(failed).toMatchObject({ status: 'failed', detail: "python cannot import 'nonexistent_mod_xyz' (requirements.txt line 3), 'another_missing_mod' (--python-check)" });
  });

  it('shares one prepare of a snapshot asked for twice at once', async () => {
    const hash = server.add(FILES);
    const both = await Promise.all([projects.prepare(instruction(hash), (r) => reports.push(r)), projects.prepare(instruction(hash, { runId: 'run-2' }), (r) => reports.push(r))]);
    expect(both).toHaveLength(2);
    expect(server.blobRequests).toHaveLength(5);
    expect(reports.filter((r) => r.status === 'ready').map((r) => r.runId).sort()).toEqual(['run-1', 'run-2']);
  });
});
