// Issue 17, "install without a compiler": `npm install` uses the prebuilt native modules (nothing forces a build
// from source), node-pty may fail to build without the install failing (the app falls back to pipes), and CI,
// whose downloads are blocked, builds from source itself.
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

  it('node-pty is optional (a failed build leaves it out; node-pty-spawner.ts falls back to pipes), better-sqlite3 is not', () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; optionalDependencies?: Record<string, string> };
    expect(pkg.optionalDependencies?.['node-pty']).toBeDefined();
    expect(pkg.dependencies['node-pty']).toBeUndefined();
    expect(pkg.dependencies['better-sqlite3']).toBeDefined();
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { optional?: boolean }> };
    expect(lock.packages['node_modules/node-pty']?.optional).toBe(true);
  });

  it('.ci/run builds the native modules from source before npm ci (it cannot download the prebuilt ones)', () => {
    const run = read('.ci/run');
    const exported = run.indexOf('export npm_config_build_from_source=true');
    expect(exported).toBeGreaterThan(-1);
    expect(exported).toBeLessThan(run.indexOf('npm ci'));
  });
});
