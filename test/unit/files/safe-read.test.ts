/**
 * readRegularFile, ClusterStore.load and `gpu-share validate` on what a person might point them at by mistake:
 * a FIFO with no writer (used to hang for ever), /dev/zero (used to eat gigabytes), a folder, a socket, a file
 * that says it is empty but is not, and a sparse 5 GiB file — each refused at once with the path and the kind.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src-main/cli/run-cli';
import { ClusterStore } from '../../../src-main/app/cluster-store';
import { readRegularFile } from '../../../src-main/platform/files/safe-read';

const LIMIT = { maxBytes: 1024, limitText: '1 KiB', expectation: 'a test file is small' };
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-safe-read-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Fails the test if `work` has not settled within `ms` (the old code blocked for ever on a FIFO). */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function validate(file: string): Promise<{ code: number; err: string }> {
  let err = '';
  const code = await runCli(['validate', file], { out: () => undefined, err: (t) => void (err += t), cwd: dir, env: process.env });
  return { code, err };
}

const hasMkfifo = spawnSync('mkfifo', ['--version']).status === 0 && process.platform !== 'win32';

describe('only regular files are read', () => {
  it.skipIf(!hasMkfifo)('a FIFO with no writer is refused at once, not waited on', async () => {
    const fifo = path.join(dir, 'cluster.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const read = await within(2000, readRegularFile(fifo, LIMIT));
    expect(read).toEqual({ ok: false, failure: { kind: 'not-regular', message: expect.stringContaining(`${fifo} is a named pipe (FIFO), not a regular file`) } });
    const loaded = await within(2000, new ClusterStore(fifo).load());
    expect(loaded.readFailure?.kind).toBe('not-regular');
    const cli = await within(2000, validate(fifo));
    expect(cli.code).toBe(2);
    expect(cli.err).toBe(`gpu-share validate: ${fifo} is a named pipe (FIFO), not a regular file, so it was not read; give the path of a cluster.yaml file\n`);
  });

  it('/dev/zero is refused at once with memory staying flat', async () => {
    if (process.platform === 'win32') return;
    const before = process.memoryUsage().rss;
    const started = Date.now();
    const cli = await within(2000, validate('/dev/zero'));
    expect(cli.code).toBe(2);
    expect(cli.err).toMatch(/^gpu-share validate: \/dev\/zero is a character device, not a regular file/);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('a folder says it is a folder', async () => {
    const folder = path.join(dir, 'folder');
    mkdirSync(folder);
    const read = await readRegularFile(folder, LIMIT);
    expect(read.ok === false && read.failure).toEqual({ kind: 'directory', message: `${folder} is a folder, not a file; give the path of the cluster.yaml inside it` });
  });

  it('a Unix socket is refused', async () => {
    if (process.platform === 'win32') return;
    const socket = path.join(dir, 's.sock');
    const server = net.createServer().listen(socket);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const read = await within(2000, readRegularFile(socket, LIMIT));
      expect(read.ok === false && read.failure.kind).toBe('not-regular');
      expect(read.ok === false && read.failure.message).toContain(socket);
    } finally {
      server.close();
    }
  });
});

describe('reading stops at the limit whatever the file claims', () => {
  it('a file whose size says 0 but holds more (a /proc file) stops one byte past the limit', async () => {
    if (process.platform !== 'linux') return;
    const read = await readRegularFile('/proc/self/maps', { ...LIMIT, maxBytes: 16 });
    expect(read.ok === false && read.failure).toEqual({
      kind: 'too-large',
      message: '/proc/self/maps is larger than 1 KiB (more than 16 bytes); a test file is small — check that this is the right file',
    });
  });

  it('a sparse 5 GiB file is refused from its size without reading it', async () => {
    const huge = path.join(dir, 'huge.yaml');
    const handle = await fs.open(huge, 'w');
    await handle.truncate(5 * 1024 * 1024 * 1024);
    await handle.close();
    const started = Date.now();
    const read = await readRegularFile(huge, LIMIT);
    expect(read.ok === false && read.failure.message).toMatch(/is larger than 1 KiB \(5368709120 bytes\)/);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('reads a file exactly at the limit, and one a byte over is too large', async () => {
    const exact = path.join(dir, 'exact');
    writeFileSync(exact, 'x'.repeat(1024));
    const ok = await readRegularFile(exact, LIMIT);
    expect(ok.ok && ok.bytes.length).toBe(1024);
    writeFileSync(exact, 'x'.repeat(1025));
    expect((await readRegularFile(exact, LIMIT)).ok).toBe(false);
  });

  it('a missing file is "missing"', async () => {
    const read = await readRegularFile(path.join(dir, 'nope.yaml'), LIMIT);
    expect(read.ok === false && read.failure.kind).toBe('missing');
  });
});
