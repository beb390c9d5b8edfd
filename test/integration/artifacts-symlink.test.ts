// `gpu-share serve` on a data folder whose artifacts/ is a symbolic link to another folder (issue 26, item 8): it
// refuses to start, naming the link, and every file in the target survives. Before, the store followed the link
// and its start-up sweep removed what looked like its own leftover uploads there, files the app never wrote.
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, ROOT } from '../e2e/helpers/app';

const dirs: string[] = [];
beforeAll(() => ensureBuilt());
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-artifacts-link-'));
  dirs.push(dir);
  return dir;
}

describe.runIf(process.platform !== 'win32')('artifacts/ as a symbolic link', () => {
  it('gpu-share serve refuses to start, names the link, and deletes nothing in its target', () => {
    const data = tempDir();
    const elsewhere = tempDir();
    // What the store's start-up sweep takes for its own: a leftover upload of a dead process, a stray file in tmp/.
    const files = {
      'notes.txt': 'someone else’s notes',
      'tmp/upload-999999-0123456789abcdef.part': 'not an upload of GPU Share',
      'tmp/keep.txt': 'not GPU Share’s either',
      [`sha256/ab/${'ab'.repeat(32)}.tar.gz`]: 'not a tarball GPU Share kept',
    };
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(elsewhere, name)), { recursive: true });
      writeFileSync(path.join(elsewhere, name), text);
    }
    const link = path.join(data, 'artifacts');
    symlinkSync(elsewhere, link);

    const r = spawnSync(process.execPath, [CLI, 'serve', '--no-local-worker', '--data-dir', data, '--host', '127.0.0.1', '--port', '0', '--coordinator-host', '127.0.0.1', '--coordinator-port', '0'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(r.status, r.stdout + r.stderr).not.toBe(0);
    expect(r.stdout).not.toContain('GPU Share is running');
    expect(r.stderr).toContain(`${link} (the artifact store folder) is a symbolic link to ${elsewhere}`);
    expect(r.stderr).toContain('left the link and its target untouched');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(elsewhere);
    for (const [name, text] of Object.entries(files)) expect(readFileSync(path.join(elsewhere, name), 'utf8'), name).toBe(text);
  }, 120_000);
});
