// scripts/electron-sqlite.mjs: whether the Electron build of better-sqlite3 is there and current, and how it is
// made — in a copy of the package, for Electron's headers, with npm's Node-pointing settings removed, node_modules'
// own build left alone. Electron, prebuild-install and node-gyp are stand-ins (no internet, no display here).
import Database from 'better-sqlite3';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { electronBindingPath as appBindingPath } from '../../../src-main/core/state/native-binding';
import { ELECTRON_VERSION, FakeCheckout, nodeBuild, repo, SQLITE_VERSION } from './fake-checkout';

interface Status {
  current: boolean;
  path?: string;
  reason?: string;
  electronVersion?: string;
  sqliteVersion?: string;
}
interface BuildOptions {
  electronBinary?: string;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}
interface ElectronSqliteScript {
  electronBindingPath(facts: { sqlitePackageDir: string; sqliteVersion: string; electronVersion: string; platform: string; arch: string }): string;
  electronSqliteStatus(root: string, where?: { platform?: string; arch?: string }): Status;
  buildEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  buildFromSourceRequested(env: NodeJS.ProcessEnv): boolean;
  buildElectronSqlite(root: string, options?: BuildOptions): string;
  ensureElectronSqlite(root: string, options?: BuildOptions): string;
  ElectronSqliteBuildError: new (...args: unknown[]) => Error;
}
let script: ElectronSqliteScript;
beforeAll(async () => {
  script = (await import(pathToFileURL(path.join(repo, 'scripts/electron-sqlite.mjs')).href)) as ElectronSqliteScript;
});

let checkout: FakeCheckout;
let logged: string[];
beforeEach(() => {
  checkout = new FakeCheckout();
  logged = [];
});
afterEach(() => checkout.remove());

/** The environment `npm start` runs the script with, as on a machine whose npm config builds for Node from source. */
function npmEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    FAKE_TOOL_LOG: checkout.toolLog,
    FAKE_NODE_BUILD: nodeBuild,
    npm_config_nodedir: '/usr',
    NPM_CONFIG_TARGET: '20.20.2',
    'npm_config_dist-url': 'https://nodejs.org/dist',
    npm_package_name: 'gpu-share',
    npm_package_config_node_gyp_nodedir: '/usr',
    HTTPS_PROXY: 'http://proxy.example:3128',
    npm_config_https_proxy: 'http://proxy.example:3128',
    ...extra,
  };
}

function build(extra: NodeJS.ProcessEnv = {}, options: BuildOptions = {}): string {
  return script.buildElectronSqlite(checkout.root, { env: npmEnv(extra), log: (line) => logged.push(line), ...options });
}

describe('is the Electron build there and current?', () => {
  it('not before it is built, then yes, at the path the app looks at', () => {
    const status = script.electronSqliteStatus(checkout.root);
    expect(status).toMatchObject({ current: false, path: checkout.electronBuild(), reason: 'it has not been built yet' });
    checkout.write(path.relative(checkout.root, checkout.electronBuild()), 'module');
    expect(script.electronSqliteStatus(checkout.root)).toMatchObject({ current: true, path: checkout.electronBuild(), electronVersion: ELECTRON_VERSION });
  });

  it('not when the build is for another Electron or better-sqlite3, and says which', () => {
    checkout.write(path.relative(checkout.root, checkout.electronBuild('44.0.0')), 'module');
    expect(script.electronSqliteStatus(checkout.root)).toMatchObject({
      current: false,
      reason: `the one built is for Electron 44.0.0 and better-sqlite3 ${SQLITE_VERSION}; Electron ${ELECTRON_VERSION} and better-sqlite3 ${SQLITE_VERSION} are installed now`,
    });
    checkout.write(path.relative(checkout.root, checkout.electronBuild(ELECTRON_VERSION, '11.0.0')), 'module');
    expect(script.electronSqliteStatus(checkout.root).current).toBe(false);
  });

  it('not for another platform or architecture', () => {
    checkout.write(path.relative(checkout.root, checkout.electronBuild()), 'module');
    expect(script.electronSqliteStatus(checkout.root, { arch: process.arch === 'arm64' ? 'x64' : 'arm64' }).current).toBe(false);
    expect(script.electronSqliteStatus(checkout.root, { platform: process.platform === 'win32' ? 'linux' : 'win32' }).current).toBe(false);
  });

  it('says to run npm install when Electron or better-sqlite3 is not installed', () => {
    expect(script.electronSqliteStatus(path.join(checkout.root, 'elsewhere'))).toEqual({
      current: false,
      reason: 'node_modules/electron is not installed (run `npm install`)',
    });
  });

  it('puts the build where the app looks for it (native-binding.ts), for any versions and platform', () => {
    for (const facts of [
      { sqlitePackageDir: '/home/me/gpu-share/node_modules/better-sqlite3', sqliteVersion: '12.11.1', electronVersion: '45.4.1', platform: 'linux', arch: 'x64' },
      { sqlitePackageDir: '/Users/me/gs/node_modules/better-sqlite3', sqliteVersion: '13.0.0', electronVersion: '46.0.0-beta.2', platform: 'darwin', arch: 'arm64' },
    ]) {
      expect(script.electronBindingPath(facts)).toBe(appBindingPath(facts));
    }
  });
});

describe("the build tools' environment", () => {
  it("drops npm's settings that aim a build at Node, and GPU Share's package facts; keeps proxies", () => {
    const env = script.buildEnv(npmEnv({ npm_config_runtime: 'node', npm_config_devdir: '/x', npm_config_arch: 'ia32', npm_config_build_from_source: 'true' }));
    expect(Object.keys(env).filter((key) => /^npm_(config_(nodedir|target|dist.url|runtime|devdir|arch|build_from_source)|package_)/i.test(key))).toEqual([]);
    expect(env).toMatchObject({ PATH: process.env.PATH, HTTPS_PROXY: 'http://proxy.example:3128', npm_config_https_proxy: 'http://proxy.example:3128' });
  });

  it('honours build-from-source set for every package or for better-sqlite3 by name', () => {
    expect(script.buildFromSourceRequested({ npm_config_build_from_source: 'true' })).toBe(true);
    expect(script.buildFromSourceRequested({ 'npm_config_build-from-source': 'better-sqlite3' })).toBe(true);
    expect(script.buildFromSourceRequested({ npm_config_build_from_source: 'node-pty' })).toBe(false);
    expect(script.buildFromSourceRequested({})).toBe(false);
  });
});

describe('building it', () => {
  it('without a prebuilt binary, compiles in a copy of the package for Electron headers; node_modules stays as it was', () => {
    const nodeModulesBuild = checkout.path('node_modules/better-sqlite3/build/Release/better_sqlite3.node');
    const before = readFileSync(nodeModulesBuild);
    checkout.write(path.relative(checkout.root, checkout.electronBuild('44.0.0')), 'old module');

    expect(build({ FAKE_NODE_GYP_MAKES: '1' })).toBe(checkout.electronBuild());

    const [prebuild, gyp] = checkout.toolCalls();
    const electronTarget = ['--runtime=electron', `--target=${ELECTRON_VERSION}`, `--arch=${process.arch}`];
    expect(prebuild).toMatchObject({ tool: 'prebuild-install', argv: expect.arrayContaining(electronTarget) });
    expect(gyp!.tool).toBe('node-gyp');
    expect(gyp!.argv).toEqual(
      expect.arrayContaining(['rebuild', '--release', ...electronTarget, '--dist-url=https://www.electronjs.org/headers']),
    );
    expect(gyp!.argv.find((arg) => arg.startsWith('--devdir='))).toMatch(/\.electron-gyp$/);
    // In a copy with the sources, never in node_modules/better-sqlite3.
    expect(gyp!.cwd).not.toContain(checkout.root);
    expect(gyp!.env).not.toHaveProperty('npm_config_nodedir');
    expect(gyp!.env).not.toHaveProperty('npm_package_config_node_gyp_nodedir');
    expect(gyp!.env).toHaveProperty('HTTPS_PROXY');
    expect(existsSync(gyp!.cwd), 'the copy is removed afterwards').toBe(false);

    expect(readFileSync(checkout.electronBuild()).equals(readFileSync(nodeBuild))).toBe(true);
    expect(readFileSync(nodeModulesBuild).equals(before)).toBe(true);
    const builds = readdirSync(checkout.path('node_modules/.cache/gpu-share'));
    expect(builds, 'the build for Electron 44 is gone').toEqual([path.basename(path.dirname(checkout.electronBuild()))]);
    expect(logged.join('\n')).toContain('compiling from source');
  });

  it('uses the prebuilt binary when there is one, without compiling', () => {
    build({ FAKE_PREBUILT_MAKES: '1' });
    expect(checkout.toolCalls().map((call) => call.tool)).toEqual(['prebuild-install']);
    expect(existsSync(checkout.electronBuild())).toBe(true);
  });

  it('compiles straight away when npm is set to build from source', () => {
    build({ FAKE_NODE_GYP_MAKES: '1', FAKE_PREBUILT_MAKES: '1', npm_config_build_from_source: 'true' });
    expect(checkout.toolCalls().map((call) => call.tool)).toEqual(['node-gyp']);
  });

  it('checks that Electron loads the result, and keeps nothing when it does not', () => {
    const electron = checkout.fakeElectron();
    build({ FAKE_NODE_GYP_MAKES: '1' }, { electronBinary: electron });
    const db = new Database(':memory:', { nativeBinding: checkout.electronBuild() });
    db.close();

    checkout.remove();
    checkout = new FakeCheckout();
    const refusing = checkout.fakeElectron();
    const refusal = 'was compiled against a different Node.js version using NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 140.';
    expect(() => build({ FAKE_NODE_GYP_MAKES: '1', FAKE_ELECTRON_REFUSES: refusal }, { electronBinary: refusing })).toThrow(
      `Electron would not load the result: ${refusal}`,
    );
    expect(readdirSync(path.dirname(checkout.electronBuild()))).toEqual([]);
  });

  it('when nothing works, says what it needs and which command to run again; nothing is left behind', () => {
    expect(() => build()).toThrow(script.ElectronSqliteBuildError);
    let message = '';
    try {
      build();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.startsWith(`Could not build the SQLite module for Electron ${ELECTRON_VERSION} (see above). It needs the internet`)).toBe(true);
    expect(message).toContain('Then run `node scripts/electron-sqlite.mjs` (or `npm start` again)');
    expect(existsSync(checkout.electronBuild())).toBe(false);
  });

  it('names a missing node-gyp', () => {
    rmSync(checkout.path('node_modules/node-gyp'), { recursive: true });
    expect(() => build({ npm_config_build_from_source: 'true' })).toThrow(/node-gyp is not installed .*run `npm install`/);
  });
});

describe('ensureElectronSqlite (npm start)', () => {
  it('builds once, saying so, and afterwards does nothing', () => {
    const options = { env: npmEnv({ FAKE_NODE_GYP_MAKES: '1' }), log: (line: string) => logged.push(line) };
    expect(script.ensureElectronSqlite(checkout.root, options)).toBe(checkout.electronBuild());
    expect(logged[0]).toBe(`Building the SQLite module for Electron ${ELECTRON_VERSION} (once, ~1 min; it has not been built yet)…`);
    const calls = checkout.toolCalls().length;
    logged = [];
    expect(script.ensureElectronSqlite(checkout.root, options)).toBe(checkout.electronBuild());
    expect(logged).toEqual([]);
    expect(checkout.toolCalls()).toHaveLength(calls);
  });
});
