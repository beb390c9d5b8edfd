// Issue 17, "install without a compiler": `npm install` uses the prebuilt native modules (nothing forces a build
// from source), node-pty comes prebuilt for Linux too (@lydell/node-pty's per-platform packages on the npm
// registry; where none fits, the app falls back to pipes), and CI, whose GitHub downloads are blocked, builds
// better-sqlite3 from source itself.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const settings = (text: string) => text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#') && !l.startsWith(';'));

describe('install configuration', () => {
  it('.npmrc forces no build from source', () => {
    expect(settings(read('.npmrc')).filter((l) => /build[-_]from[-_]source/.test(l))).toEqual([]);
  });

  it('node-pty comes as @lydell/node-pty: no install script, its prebuilt binaries from the npm registry per platform (Linux too), better-sqlite3 a dependency', () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; optionalDependencies?: Record<string, string> };
    expect(pkg.dependencies['@lydell/node-pty']).toBeDefined();
    expect(pkg.dependencies['node-pty'] ?? pkg.optionalDependencies?.['node-pty']).toBeUndefined();
    expect(pkg.dependencies['better-sqlite3']).toBeDefined();
    type Locked = { optional?: boolean; hasInstallScript?: boolean; os?: string[]; cpu?: string[]; resolved?: string; optionalDependencies?: Record<string, string> };
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, Locked> };
    expect(lock.packages['node_modules/node-pty']).toBeUndefined();
    const main = lock.packages['node_modules/@lydell/node-pty'];
    expect(main?.hasInstallScript).toBeUndefined();
    for (const platform of ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64']) {
      const name = `@lydell/node-pty-${platform}`;
      expect(main?.optionalDependencies?.[name]).toBeDefined();
      const bin = lock.packages[`node_modules/${name}`];
      expect(bin).toMatchObject({ optional: true, os: [platform.split('-')[0]], cpu: [platform.split('-')[1]] });
      expect(bin?.hasInstallScript).toBeUndefined();
      if (bin?.resolved) expect(bin.resolved).toMatch(/^https:\/\/registry\.npmjs\.org\//);
    }
  });

  it('the pty module installed here loads its prebuilt binary and spawns a real pty (no compiler involved)', async () => {
    const pty = await import('@lydell/node-pty');
    const child = pty.spawn('/bin/sh', ['-c', 'tty; echo pty-ok'], { cols: 80, rows: 24, cwd: ROOT, env: process.env as Record<string, string> });
    const out = await new Promise<string>((resolve) => {
      let text = '';
      child.onData((d) => (text += d));
      child.onExit(() => resolve(text));
    });
    expect(out).toMatch(/\/dev\/pts\/\d+/);
    expect(out).toContain('pty-ok');
  });

  it('.ci/run builds the native modules from source before npm ci (it cannot download the prebuilt ones)', () => {
    const run = read('.ci/run');
    const exported = run.indexOf('export npm_config_build_from_source=true');
    expect(exported).toBeGreaterThan(-1);
    expect(exported).toBeLessThan(run.indexOf('npm ci'));
  });
});
