// The built CLI on a data folder whose private files are symbolic links: `gpu-share serve` with a linked
// secrets.json and `gpu-share worker --print-node-key` with a linked node-key refuse, naming the file, and leave
// the link and its target (bytes and mode) as they were. Before, serve used the tokens the link pointed at, and
// the worker used (and chmodded to 0600) a key of someone else's choosing.
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
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
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-private-link-'));
  dirs.push(dir);
  return dir;
}

/** A file outside the data folder, readable by others, and a link to it at `link`. */
function plant(link: string, text: string): { target: string; text: string } {
  const target = path.join(tempDir(), 'someone-elses');
  writeFileSync(target, text);
  chmodSync(target, 0o644);
  symlinkSync(target, link);
  return { target, text };
}

function expectUntouched(link: string, planted: { target: string; text: string }): void {
  expect(lstatSync(link).isSymbolicLink()).toBe(true);
  expect(readlinkSync(link)).toBe(planted.target);
  expect(statSync(planted.target).mode & 0o777).toBe(0o644);
  expect(readFileSync(planted.target, 'utf8')).toBe(planted.text);
}

function cli(args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
}

describe.runIf(process.platform !== 'win32')('private files of the data folder as symbolic links', () => {
  it('gpu-share serve refuses a linked secrets.json, names it, and leaves the link and its target untouched', () => {
    const data = tempDir();
    const link = path.join(data, 'secrets.json');
    const planted = plant(link, JSON.stringify({ joinToken: 'j'.repeat(43), operatorToken: 'o'.repeat(43), pageToken: 'p'.repeat(43) }));
    const r = cli(['serve', '--no-local-worker', '--data-dir', data, '--host', '127.0.0.1', '--port', '0', '--coordinator-host', '127.0.0.1', '--coordinator-port', '0']);
    expect(r.status, r.stdout + r.stderr).not.toBe(0);
    expect(r.stdout).not.toContain('GPU Share is running');
    expect(r.stdout).not.toContain('p'.repeat(43)); // the page URL with the planted token is never printed
    expect(r.stderr).toContain(`${link} (the cluster's tokens) is a symbolic link to ${planted.target}`);
    expectUntouched(link, planted);
  }, 90_000);

  it('gpu-share worker --print-node-key refuses a linked node-key, names it, and leaves the link and its target untouched', () => {
    const data = tempDir();
    const link = path.join(data, 'node-key');
    const planted = plant(link, 'machine-binding: x\n-----BEGIN PRIVATE KEY-----\nnot yours\n-----END PRIVATE KEY-----\n');
    const r = cli(['worker', '--print-node-key', '--data-dir', data]);
    expect(r.status, r.stdout + r.stderr).not.toBe(0);
    expect(r.stdout).not.toContain('node-key ');
    expect(r.stderr).toContain(`${link} (this machine's node key) is a symbolic link to ${planted.target}`);
    expectUntouched(link, planted);
  }, 90_000);
});
