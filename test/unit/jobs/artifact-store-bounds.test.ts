// What the artifact store keeps outside the artifact index, and what it refuses: one upload at a time per claim,
// a claim's new upload replacing its previous one, uploads no completion indexed removed after a grace, stale
// temp files swept at start, tarballs that would unpack outside refused (422) with nothing kept, and no
// symbolic link in the store served.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { handMadeTarGz, paxRecords, tarballOf } from './hand-made-tar';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'artifact-bounds-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const put = (store: ArtifactStore, bytes: Buffer, claim?: string) => store.put(Readable.from([bytes]), sha(bytes), bytes.length, claim);

/** The stored tarballs (sha256 ids), temp files aside. */
function stored(root = dir): string[] {
  const byHash = path.join(root, 'sha256');
  return fs
    .readdirSync(byHash)
    .flatMap((sub) => fs.readdirSync(path.join(byHash, sub)))
    .map((name) => name.replace('.tar.gz', ''))
    .sort();
}
const temps = () => fs.readdirSync(path.join(dir, 'tmp'));

describe('ArtifactStore bounds', () => {
  it('forty distinct 8 MiB uploads under one claim keep one tarball: each replaces the one before', async () => {
    const store = new ArtifactStore(dir);
    store.useIndex(() => false);
    const weights = randomBytes(8 * 1024 ** 2);
    let last = '';
    for (let i = 0; i < 40; i++) {
      const tarball = tarballOf(weights, `adapter-${i}.safetensors`);
      last = sha(tarball);
      expect((await put(store, tarball, `job-a/claimAAAA1.1`)).stored).toBe('new');
      expect(stored().length).toBe(1);
    }
    expect(stored()).toEqual([last]);
    expect(store.unindexedCount).toBe(1);
    expect(temps()).toEqual([]);
  }, 30_000);

  it('removes nothing before it knows the index (useIndex): a store alone cannot tell an indexed tarball', async () => {
    const store = new ArtifactStore(dir);
    const [a, b] = [tarballOf(Buffer.from('a'), 'a'), tarballOf(Buffer.from('b'), 'b')];
    await put(store, a, 'job-a/1');
    await put(store, b, 'job-a/1');
    expect(stored()).toEqual([sha(a), sha(b)].sort());
  });

  it("a replaced upload is kept while something else holds it: the index, another claim's upload", async () => {
    const store = new ArtifactStore(dir);
    const indexed = new Set<string>();
    store.useIndex((id) => indexed.has(id));
    const [x, y, z, w] = ['x', 'y', 'z', 'w'].map((n) => tarballOf(Buffer.from(n), n)) as [Buffer, Buffer, Buffer, Buffer];
    await put(store, x, 'job-a/1');
    await put(store, x, 'job-b/1'); // the same bytes, "existing": claim b holds them too
    await put(store, y, 'job-a/1'); // x is b's as well: kept
    expect(stored()).toEqual([sha(x), sha(y)].sort());
    await put(store, z, 'job-b/1'); // now nobody holds x: it goes (two claims cannot pass bytes back and forth to keep them)
    expect(stored()).toEqual([sha(y), sha(z)].sort());
    // A completed job's tarball is in the index: a later upload under its claim does not remove it.
    indexed.add(sha(y));
    store.indexed('job-a/1');
    await put(store, w, 'job-a/1');
    expect(stored()).toContain(sha(y));
  });

  it('an upload no completion indexed is removed after the grace; indexed ones stay', async () => {
    let now = 1_000_000;
    const store = new ArtifactStore(dir, { unindexedGraceMs: 60_000, now: () => now });
    const indexed = new Set<string>();
    store.useIndex((id) => indexed.has(id));
    const [done, abandoned] = [tarballOf(Buffer.from('done'), 'd'), tarballOf(Buffer.from('abandoned'), 'a')];
    await put(store, done, 'job-a/1');
    indexed.add(sha(done));
    store.indexed('job-a/1');
    await put(store, abandoned, 'job-b/1');
    now += 59_000;
    expect(store.sweepUnindexed()).toBe(0);
    expect(stored()).toHaveLength(2);
    now += 11_000;
    expect(store.sweepUnindexed()).toBe(1);
    expect(stored()).toEqual([sha(done)]);
    expect(store.unindexedCount).toBe(0);
  });

  it('tarballs found on disk at start that the index does not know go after the grace, counted from the start', async () => {
    const first = new ArtifactStore(dir);
    const [kept, orphan] = [tarballOf(Buffer.from('kept'), 'k'), tarballOf(Buffer.from('orphan'), 'o')];
    await put(first, kept, 'job-a/1');
    await put(first, orphan, 'job-b/1');
    let now = 5_000_000;
    const second = new ArtifactStore(dir, { unindexedGraceMs: 60_000, now: () => now });
    second.useIndex((id) => id === sha(kept));
    expect(second.unindexedCount).toBe(1);
    now += 30_000;
    expect(second.sweepUnindexed()).toBe(0);
    now += 31_000;
    expect(second.sweepUnindexed()).toBe(1);
    expect(stored()).toEqual([sha(kept)]);
  });

  it('refuses a second upload under the same claim while one is in progress (429, ask again), and takes it after', async () => {
    const store = new ArtifactStore(dir);
    store.useIndex(() => false);
    const tarball = tarballOf(randomBytes(100_000));
    const slow = new PassThrough();
    const first = store.put(slow, sha(tarball), tarball.length, 'job-a/claimAAAA1.1');
    slow.write(tarball.subarray(0, 1000));
    await new Promise((r) => setTimeout(r, 20));
    const other = tarballOf(randomBytes(1000), 'other');
    await expect(put(store, other, 'job-a/claimAAAA1.1')).rejects.toMatchObject({
      status: 429,
      retryAfterS: 10,
      message: expect.stringContaining('another upload for this claim of the job is still in progress'),
    });
    expect(temps()).toHaveLength(1); // the first upload's own, nothing from the refused one
    expect((await put(store, other, 'job-b/claimBBBB1.1')).stored).toBe('new'); // another claim is not held up
    slow.end(tarball.subarray(1000));
    expect((await first).stored).toBe('new');
    expect((await put(store, tarballOf(Buffer.from('again'), 'again'), 'job-a/claimAAAA1.1')).stored).toBe('new');
    expect(temps()).toEqual([]);
  });

  it('refuses a tarball that would unpack outside (422), naming the member, keeping nothing', async () => {
    const store = new ArtifactStore(dir);
    store.useIndex(() => false);
    for (const [bad, member] of [
      [handMadeTarGz([{ path: 'ok.txt', body: 'ok' }, { path: '../../../etc/cron.d/x', body: 'evil' }]), '../../../etc/cron.d/x'],
      [handMadeTarGz([{ path: 'etc', type: '2', linkpath: '/etc' }]), 'etc'],
      // Issue 26: a PAX global header renames the member for Python's tarfile and GNU tar.
      [handMadeTarGz([{ path: 'pax_global_header', type: 'g', body: paxRecords({ path: '../../x' }) }, { path: 'ok.txt', body: 'ok' }]), '../../x'],
    ] as const) {
      await expect(put(store, bad, 'job-a/1')).rejects.toMatchObject({ status: 422, message: expect.stringContaining(`member "${member}"`) });
      expect(store.has(sha(bad))).toBe(false);
    }
    await expect(put(store, randomBytes(5000), 'job-a/1')).rejects.toMatchObject({ status: 422, message: expect.stringContaining('not gzip-compressed') });
    expect(stored()).toEqual([]);
    expect(temps()).toEqual([]);
  });

  it('stops an upload at its first bad member, before the rest of the body is read', async () => {
    const store = new ArtifactStore(dir);
    const bad = handMadeTarGz([{ path: '../../.ssh/authorized_keys', body: 'ssh-ed25519 AAAA attacker' }, { path: 'big.bin', body: randomBytes(2 * 1024 ** 2) }]);
    const body = new PassThrough();
    const put = store.put(body, sha(bad), bad.length, 'job-a/1');
    body.write(bad.subarray(0, 64 * 1024)); // the first member's header is in here; the body never ends
    await expect(put).rejects.toMatchObject({ status: 422, message: expect.stringContaining('member "../../.ssh/authorized_keys"') });
    expect(body.writableEnded).toBe(false);
    expect(temps()).toEqual([]);
    expect(stored()).toEqual([]);
  });

  it.runIf(process.platform !== 'win32')('sweeps at start a temp file last written before it, whatever its pid says', () => {
    fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true });
    // The parent process is alive: a reused (or long-lived) pid must not keep a stale temp file for ever.
    const stale = `upload-${process.ppid}-${'2'.repeat(16)}.part`;
    const mine = `upload-${process.pid}-${'3'.repeat(16)}.part`;
    for (const name of [stale, mine]) fs.writeFileSync(path.join(dir, 'tmp', name), 'partial', { mode: 0o600 });
    const past = new Date(Date.now() - 3_600_000);
    fs.utimesSync(path.join(dir, 'tmp', stale), past, past);
    new ArtifactStore(dir);
    expect(temps()).toEqual([mine]);
  });

  it.runIf(process.platform !== 'win32')('does not serve or count a symbolic link planted in the store', async () => {
    const store = new ArtifactStore(dir);
    const id = sha(Buffer.from('planted'));
    fs.mkdirSync(path.join(dir, 'sha256', id.slice(0, 2)), { recursive: true });
    const secret = path.join(dir, 'secret.txt');
    fs.writeFileSync(secret, 'operator token');
    fs.symlinkSync(secret, path.join(dir, 'sha256', id.slice(0, 2), `${id}.tar.gz`));
    expect(store.open(id)).toBe(null);
    expect(store.has(id)).toBe(false);
    expect(store.sizeOf(id)).toBe(null);
    // A linked folder is not written through: the upload is refused and nothing lands in the link's target.
    const tarball = tarballOf(Buffer.from('weights'));
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'artifact-elsewhere-'));
    fs.symlinkSync(elsewhere, path.join(dir, 'sha256', sha(tarball).slice(0, 2)));
    await expect(put(store, tarball)).rejects.toThrow(/is a symbolic link/);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    fs.rmSync(elsewhere, { recursive: true });
  });

  it.runIf(process.platform !== 'win32')('refuses to open a store whose sha256 or tmp folder is a symbolic link', () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'artifact-elsewhere-'));
    fs.symlinkSync(elsewhere, path.join(dir, 'tmp'));
    expect(() => new ArtifactStore(dir)).toThrow(`${path.join(dir, 'tmp')} (the artifact store's temp folder) is a symbolic link to ${elsewhere}`);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    fs.rmSync(elsewhere, { recursive: true });
  });
});
