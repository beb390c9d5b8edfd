// The data folder's private files are never followed through a symbolic link: a link at the file is refused
// (named) for reading, writing and tightening, a planted FILE.<pid>.tmp link is never written through, and the
// targets keep their bytes and modes.
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readPrivateFileSync, tightenToOwnerOnly, writePrivateFileSync } from '../../../src-main/platform/files/private-file';
import { SymlinkRefusedError } from '../../../src-main/platform/files/refuse-symlink';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'gpu-share-private-'));
  dirs.push(d);
  return d;
}

/** A file outside the data folder, readable by others, that a link may point at. */
function victim(): string {
  const file = path.join(tempDir(), 'victim.txt');
  writeFileSync(file, 'not yours');
  chmodSync(file, 0o644);
  return file;
}

describe.runIf(process.platform !== 'win32')('private data files', () => {
  it('reads, writes and tightens a regular file; a missing one reads as null', () => {
    const file = path.join(tempDir(), 'secrets.json');
    expect(readPrivateFileSync(file, 'the secrets')).toBe(null);
    writePrivateFileSync(file, '{"a":1}', 'the secrets');
    expect(readPrivateFileSync(file, 'the secrets')).toBe('{"a":1}');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    chmodSync(file, 0o644);
    expect(tightenToOwnerOnly(file, 'the secrets')).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(path.dirname(file))).toEqual(['secrets.json']); // no temp file left
  });

  it('refuses a symbolic link at the file for every operation, naming it, and leaves the target as it was', () => {
    const target = victim();
    const file = path.join(tempDir(), 'secrets.json');
    symlinkSync(target, file);
    for (const op of [() => readPrivateFileSync(file, 'the secrets'), () => writePrivateFileSync(file, 'x', 'the secrets'), () => tightenToOwnerOnly(file, 'the secrets')]) {
      expect(op).toThrow(SymlinkRefusedError);
      expect(op).toThrow(`${file} (the secrets) is a symbolic link to ${target}`);
    }
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('not yours');
    expect(statSync(target).mode & 0o777).toBe(0o644);
  });

  it('never writes through a link planted at the old predictable temp name', () => {
    const target = victim();
    const file = path.join(tempDir(), 'secrets.json');
    symlinkSync(target, `${file}.${process.pid}.tmp`);
    writePrivateFileSync(file, '{"token":"t"}', 'the secrets');
    expect(readFileSync(file, 'utf8')).toBe('{"token":"t"}');
    expect(readFileSync(target, 'utf8')).toBe('not yours');
    expect(statSync(target).mode & 0o777).toBe(0o644);
  });
});
