// `gpu-share serve` (the built CLI) on a data folder whose state.db is a symbolic link: it refuses to start,
// naming the file, and leaves the link where it is and its target's bytes and mode as they were. Before, it
// chmodded the target to 0600 through the link, moved the link aside and started with empty state.
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
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
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-state-link-'));
  dirs.push(dir);
  return dir;
}

describe.runIf(process.platform !== 'win32')('state.db as a symbolic link', () => {
  it('gpu-share serve refuses to start, names the file, and leaves the link and its target untouched', () => {
    const data = tempDir();
    const elsewhere = tempDir();
    const target = path.join(elsewhere, 'someone-elses.db');
    writeFileSync(target, 'not GPU Share state, and not to be chmodded or moved');
    chmodSync(target, 0o644);
    const link = path.join(data, 'state.db');
    symlinkSync(target, link);

    const r = spawnSync(process.execPath, [CLI, 'serve', '--no-local-worker', '--data-dir', data, '--host', '127.0.0.1', '--port', '0', '--coordinator-host', '127.0.0.1', '--coordinator-port', '0'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stdout + r.stderr).not.toBe(0);
    expect(r.stdout).not.toContain('GPU Share is running');
    expect(r.stderr).toContain(`${link} (the state database) is a symbolic link to ${target}`);
    expect(r.stderr).toContain('left the link and its target untouched');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    expect(statSync(target).mode & 0o777).toBe(0o644);
    expect(readFileSync(target, 'utf8')).toBe('not GPU Share state, and not to be chmodded or moved');
    expect(readdirSync(data).filter((f) => f.startsWith('state.db'))).toEqual(['state.db']);
    expect(readdirSync(elsewhere)).toEqual(['someone-elses.db']);
  }, 90_000);
});
