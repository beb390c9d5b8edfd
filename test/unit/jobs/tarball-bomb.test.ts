// Issue 26 item 9: a gzip bomb under the unpacked-size cap cost the coordinator 21 s of CPU for a 15.5 GiB one.
// The inspection now stops as soon as the archive unpacks to more than 64 MiB plus 100 times what was read of it:
// a test counts the unpacked bytes it looked at, not the time it took.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { DEFAULT_TARBALL_LIMITS, TarballInspector, TarballRefusedError } from '../../../src-main/core/jobs/tarball-inspect';
import { gzipBomb } from './gzip-bomb';
import { handMadeTar } from './hand-made-tar';
import { hasPython, pythonMembers } from './python-tar';

const MiB = 1024 ** 2;
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpu-share-bomb-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Feeds `bytes` in 64 KiB chunks as an upload arrives; the inspector and its verdict. */
async function inspect(bytes: Buffer, limits = DEFAULT_TARBALL_LIMITS): Promise<{ inspector: TarballInspector; verdict: unknown }> {
  const inspector = new TarballInspector(limits);
  for (let at = 0; at < bytes.length && !inspector.refusal; at += 64 * 1024) await inspector.write(bytes.subarray(at, at + 64 * 1024));
  const verdict = await inspector.end().catch((e: unknown) => e);
  return { inspector, verdict };
}

describe('gzip bombs', () => {
  it('a 1 GiB bomb (1.1 MiB compressed) under the 16 GiB cap is refused after at most 80 MiB unpacked', async () => {
    const bomb = gzipBomb(1024 * MiB);
    expect(bomb.length).toBeLessThan(1.2 * MiB); // 900:1, under node-tar's own 1000:1 bound
    const { inspector, verdict } = await inspect(bomb);
    expect(verdict).toBeInstanceOf(TarballRefusedError);
    expect((verdict as TarballRefusedError).member).toBe('zeros.bin');
    expect((verdict as TarballRefusedError).message).toMatch(/^the artifact's member "zeros.bin" unpacks to \d+\.\d MiB from the first \d+ KiB of the archive, as a gzip bomb does; .* \(100:1\)$/);
    expect(inspector.inflatedBytes).toBeGreaterThan(64 * MiB);
    // 64 MiB, plus 100 times what was handed to zlib by then (about 85 KiB read, and a 64 KiB piece in flight).
    expect(inspector.inflatedBytes).toBeLessThanOrEqual(80 * MiB);
  });

  it.runIf(hasPython)('the bomb is a real tarball: Python reads its member at its full size', () => {
    const file = path.join(dir, 'bomb.tar.gz');
    fs.writeFileSync(file, gzipBomb(100 * MiB + 5));
    expect(pythonMembers(file)).toEqual([{ name: 'zeros.bin', type: '0', linkname: '', size: 100 * MiB + 5 }]);
  });

  it('the ratio bound holds past the floor only: compressible content under it is taken, over it refused', async () => {
    const limits = { ...DEFAULT_TARBALL_LIMITS, ratioFloorBytes: MiB, maxRatio: 100 };
    const text = Buffer.from(randomBytes(4 * MiB).toString('hex')); // 8 MiB, about 2:1
    const ok = await inspect(gzipSync(handMadeTar([{ path: 'log.txt', body: text }])), limits);
    expect(ok.verdict).toEqual({ entries: 1, unpackedBytes: 8 * MiB });
    const small = await inspect(gzipSync(handMadeTar([{ path: 'pad.bin', body: Buffer.alloc(MiB / 2) }])), limits);
    expect(small.verdict).toEqual({ entries: 1, unpackedBytes: MiB / 2 }); // 1000:1, but under the floor
    const zeros = await inspect(gzipSync(handMadeTar([{ path: 'zeros.bin', body: Buffer.alloc(8 * MiB) }])), limits);
    expect((zeros.verdict as TarballRefusedError).message).toContain('gzip bomb');
    expect(zeros.inspector.inflatedBytes).toBeLessThanOrEqual(3 * MiB);
  });

  it('an upload of a bomb is refused (422) while its body is still arriving, and nothing is kept', async () => {
    const store = new ArtifactStore(dir);
    const bomb = gzipBomb(4096 * MiB);
    const body = new PassThrough();
    const put = store.put(body, createHash('sha256').update(bomb).digest('hex'), bomb.length, 'job-a/1');
    body.write(bomb.subarray(0, 512 * 1024)); // about 500 MiB unpacked; the body never ends
    await expect(put).rejects.toMatchObject({ status: 422, message: expect.stringContaining('gzip bomb') });
    expect(body.writableEnded).toBe(false);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
    expect(fs.readdirSync(path.join(dir, 'sha256'))).toEqual([]);
  });
});
