/**
 * A node moving between a plain SSH start and a kept one keeps its identity: the carry script, run in a real sh
 * with a throwaway HOME, copies node-key and machine-id into the folder the worker starts from when that one has
 * neither, both ways, and never overwrites an identity already there.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { carryIdentityScript } from '../../../src-main/core/ssh/remote-identity';

const root = mkdtempSync(path.join(tmpdir(), 'gs-identity-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function home(label: string): string {
  const dir = path.join(root, label);
  mkdirSync(dir);
  return dir;
}

function run(script: string, homeDir: string, env: Record<string, string> = {}): string {
  return execFileSync('sh', ['-s'], { input: script, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: homeDir, ...env } });
}

function identity(dir: string, key: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'node-key'), key, { mode: 0o600 });
  writeFileSync(path.join(dir, 'machine-id'), `id-of-${key}`, { mode: 0o600 });
}

describe('carrying the node identity between the SSH and the service data folders', () => {
  it('plain start first, then kept: the key and machine id go into <app data>/workers/<name>, owner-only', () => {
    const h = home('to-service');
    identity(path.join(h, '.gpu-share', 'nodes', 'gpu box', 'data'), 'K1');
    expect(run(carryIdentityScript(h, 'gpu box', 'default'), h).trim()).toBe('carried');
    const to = path.join(h, '.config', 'GPU Share', 'workers', 'gpu_box');
    expect(readFileSync(path.join(to, 'node-key'), 'utf8')).toBe('K1');
    expect(readFileSync(path.join(to, 'machine-id'), 'utf8')).toBe('id-of-K1');
    expect(statSync(to).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(to, 'node-key')).mode & 0o777).toBe(0o600);
  });

  it('kept first, then a plain start: the other way; GPU_SHARE_HOME moves the service folder as the agent does', () => {
    const h = home('to-run');
    identity(path.join(h, 'custom', 'workers', 'box'), 'K2');
    expect(run(carryIdentityScript(h, 'box', 'run'), h, { GPU_SHARE_HOME: path.join(h, 'custom') }).trim()).toBe('carried');
    expect(readFileSync(path.join(h, '.gpu-share', 'nodes', 'box', 'data', 'node-key'), 'utf8')).toBe('K2');
  });

  it('never overwrites an identity there, and does nothing when there is none to carry', () => {
    const h = home('kept');
    identity(path.join(h, '.gpu-share', 'nodes', 'box', 'data'), 'K1');
    identity(path.join(h, '.config', 'GPU Share', 'workers', 'box'), 'K3');
    expect(run(carryIdentityScript(h, 'box', 'default'), h)).toBe('');
    expect(readFileSync(path.join(h, '.config', 'GPU Share', 'workers', 'box', 'node-key'), 'utf8')).toBe('K3');
    const empty = home('empty');
    expect(run(carryIdentityScript(empty, 'box', 'default'), empty)).toBe('');
    expect(existsSync(path.join(empty, '.config'))).toBe(false);
  });
});
