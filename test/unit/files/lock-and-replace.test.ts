/**
 * The write side on real files: the lock waits for a live holder and says who it is, breaks the lock of a
 * dead one, and is released on errors; a read-only cluster.yaml is never replaced (store and CLI say so);
 * a store refuses to overwrite a file someone else changed since it read it.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src-main/cli/run-cli';
import { ClusterChangedError, ClusterStore } from '../../../src-main/app/cluster-store';
import { ReadOnlyFileError } from '../../../src-main/platform/files/atomic-replace';
import { FileLockTimeout, withFileLock } from '../../../src-main/platform/files/file-lock';
import { serializeClusterYaml, type ClusterConfig } from '../../../src-shared/cluster/index';

let dir: string;
let counter = 0;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-lock-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fresh = (name = 'cluster.yaml') => path.join(dir, `${++counter}-${name}`);

const cluster = (...names: string[]): ClusterConfig => ({
  nodes: names.map((name) => ({ name, host: `${name}.lan`, transport: 'ssh' as const, gpus: [], max_adapters: 1 })),
});

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('withFileLock', () => {
  it('waits for a live holder, then times out naming it', async () => {
    const target = fresh();
    writeFileSync(`${target}.lock`, JSON.stringify({ pid: process.ppid, host: os.hostname(), at: Date.now(), nonce: 'other' }));
    const started = Date.now();
    const error = await withFileLock(target, async () => 'ran', { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FileLockTimeout);
    expect((error as Error).message).toBe(
      `${target}.lock is held by process ${process.ppid} on ${os.hostname()}, which is changing the same file; try again in a moment (if no GPU Share or gpu-share command is running, delete ${target}.lock)`,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(existsSync(`${target}.lock`)).toBe(true);
  });

  it("breaks the lock of a process that died holding it, and removes its own when done (even on error)", async () => {
    const target = fresh();
    writeFileSync(`${target}.lock`, JSON.stringify({ pid: await deadPid(), host: os.hostname(), at: Date.now(), nonce: 'dead' }));
    expect(await withFileLock(target, async () => 'ran', { timeoutMs: 1000 })).toBe('ran');
    expect(existsSync(`${target}.lock`)).toBe(false);
    await expect(withFileLock(target, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(existsSync(`${target}.lock`)).toBe(false);
  });

  it('runs holders one at a time', async () => {
    const target = fresh();
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        withFileLock(target, async () => {
          most = Math.max(most, ++inside);
          await new Promise((r) => setTimeout(r, 5));
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
  });
});

describe('a read-only cluster.yaml', () => {
  it('is not replaced by save or update; the error names the file and what to do', async () => {
    const file = fresh();
    writeFileSync(file, serializeClusterYaml(cluster('a')));
    chmodSync(file, 0o444);
    const before = readFileSync(file);
    const store = new ClusterStore(file);
    await store.load();
    const saved = await store.save(cluster('a', 'b')).catch((e: unknown) => e);
    expect(saved).toBeInstanceOf(ReadOnlyFileError);
    expect((saved as Error).message).toBe(
      `${file} is read-only (mode 0444), so it was not changed; make it writable (chmod u+w ${file}) and try again, or point GPU Share at another file`,
    );
    await expect(store.update((c) => ({ nodes: [...c!.nodes, ...cluster('c').nodes] }))).rejects.toBeInstanceOf(ReadOnlyFileError);
    expect(readFileSync(file)).toEqual(before);
    expect(statSync(file).mode & 0o777).toBe(0o444);
    expect(existsSync(`${file}.bak`)).toBe(false);
  });

  it('gpu-share add-this-machine says so with exit 1 and leaves it', async () => {
    const file = fresh();
    writeFileSync(file, serializeClusterYaml(cluster('server')));
    chmodSync(file, 0o400);
    const before = readFileSync(file);
    let err = '';
    const env = { ...process.env, GPU_SHARE_HOME: dir, GPU_SHARE_NVIDIA_SMI: path.join(dir, 'no-nvidia-smi') };
    const code = await runCli(['add-this-machine', '--cluster', file], { out: () => undefined, err: (t) => void (err += t), cwd: dir, env });
    expect(code).toBe(1);
    expect(err).toBe(`gpu-share add-this-machine: ${file} is read-only (mode 0400), so it was not changed; make it writable (chmod u+w ${file}) and try again, or point GPU Share at another file\n`);
    expect(readFileSync(file)).toEqual(before);
  });
});

describe('a file changed since it was read', () => {
  it('save refuses with ClusterChangedError and keeps the other change; update re-applies on top of it', async () => {
    const file = fresh();
    writeFileSync(file, serializeClusterYaml(cluster('a')));
    const mine = new ClusterStore(file);
    const theirs = new ClusterStore(file);
    await Promise.all([mine.load(), theirs.load()]);
    await theirs.save(cluster('a', 'theirs'));
    const error = await mine.save(cluster('a', 'mine')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClusterChangedError);
    expect((error as Error).message).toContain(`${file} was changed by another program since GPU Share read it, so it was not overwritten`);
    expect(readFileSync(file, 'utf8')).toContain('name: theirs');
    await mine.update((current) => ({ nodes: [...current!.nodes, ...cluster('mine').nodes] }));
    expect((await mine.load()).config?.nodes.map((n) => n.name)).toEqual(['a', 'theirs', 'mine']);
    // Having read the new version, the store may save again.
    await mine.save(cluster('a', 'mine'));
    expect((await theirs.load()).config?.nodes.map((n) => n.name)).toEqual(['a', 'mine']);
  });
});
