// Which better-sqlite3 build the state database loads: node_modules' own under plain Node and in a packaged app,
// the separate Electron build when Electron runs from a checkout, and a message naming the command when that
// build is missing. The facts are passed in; a real .node file is loaded through the chosen path.
import Database from 'better-sqlite3';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  chooseSqliteBinding,
  currentRuntimeFacts,
  ElectronSqliteMissingError,
  electronBindingPath,
  isPackagedApp,
  sqliteBindingForThisProcess,
  type RuntimeFacts,
} from '../../../src-main/core/state/native-binding';
import { openStateDb } from '../../../src-main/core/state/index';
import { tempDataDir } from './temp-state';
import { parse } from 'yaml';

const repo = path.resolve(__dirname, '../../..');
const nodeBuild = path.join(repo, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
const neverAsked = (file: string): boolean => {
  throw new Error(`looked for ${file}, which it should not need`);
};

let checkout: string;
beforeEach(() => {
  checkout = mkdtempSync(path.join(os.tmpdir(), 'gpu-share-binding-'));
});
afterEach(() => rmSync(checkout, { recursive: true, force: true }));

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('it did not throw');
}

/** Electron 45 run from `checkout` (npm start): Electron's resources folder is inside node_modules/electron. */
function devElectron(overrides: Partial<RuntimeFacts> = {}): RuntimeFacts {
  return {
    electronVersion: '45.4.1',
    platform: 'linux',
    arch: 'x64',
    resourcesPath: path.join(checkout, 'node_modules/electron/dist/resources'),
    codeDir: path.join(checkout, 'dist/main'),
    sqlitePackageDir: path.join(checkout, 'node_modules/better-sqlite3'),
    sqliteVersion: '12.11.1',
    ...overrides,
  };
}

describe('chooseSqliteBinding', () => {
  it("uses node_modules' own build under plain Node, without looking for anything", () => {
    expect(chooseSqliteBinding(devElectron({ electronVersion: undefined, resourcesPath: undefined }), neverAsked)).toBeUndefined();
  });

  it('uses the Electron build from node_modules/.cache when Electron runs from a checkout, and it loads', () => {
    const expected = path.join(checkout, 'node_modules/.cache/gpu-share/better-sqlite3-12.11.1-electron-45.4.1-linux-x64/better_sqlite3.node');
    mkdirSync(path.dirname(expected), { recursive: true });
    // This machine's Node build stands in for Electron's: what matters is that the chosen path is a loadable module.
    copyFileSync(nodeBuild, expected);
    const chosen = chooseSqliteBinding(devElectron());
    expect(chosen).toBe(expected);
    const db = new Database(':memory:', { nativeBinding: chosen });
    try {
      expect(db.prepare('SELECT 40 + 2 AS answer').get()).toEqual({ answer: 42 });
    } finally {
      db.close();
    }
  });

  it('without the Electron build, says which file is missing and which command builds it', () => {
    const facts = devElectron();
    const missing = electronBindingPath({ ...facts, electronVersion: '45.4.1' });
    expect(() => chooseSqliteBinding(facts)).toThrow(expect.objectContaining({ name: 'ElectronSqliteMissingError', bindingPath: missing }));
    const message = messageOf(() => chooseSqliteBinding(facts));
    expect(message).toContain('Electron 45.4.1');
    expect(message).toContain('better-sqlite3 12.11.1');
    expect(message).toContain(`${missing} does not exist`);
    expect(message).toContain('`npm start`');
    expect(message).toContain(`\`node scripts/electron-sqlite.mjs\` in ${checkout} `);
  });

  it('keeps builds for other Electron versions, platforms and better-sqlite3 versions apart', () => {
    const paths = [
      devElectron(),
      devElectron({ electronVersion: '46.0.0' }),
      devElectron({ arch: 'arm64' }),
      devElectron({ platform: 'darwin' }),
      devElectron({ sqliteVersion: '12.12.0' }),
    ].map((facts) => electronBindingPath({ ...facts, electronVersion: facts.electronVersion! }));
    expect(new Set(paths).size).toBe(paths.length);
  });

  it("uses node_modules' own build in a packaged app (electron-builder rebuilt it for Electron)", () => {
    const resources = path.join(checkout, 'opt/GPU Share/resources');
    const packaged = devElectron({ resourcesPath: resources, codeDir: path.join(resources, 'app.asar/dist/main') });
    expect(chooseSqliteBinding(packaged, neverAsked)).toBeUndefined();
  });
});

describe('the packaged app', () => {
  // electron-builder's own matcher over electron-builder.yml's asarUnpack (a real build needs the internet).
  const { FileMatcher } = createRequire(import.meta.url)('app-builder-lib/out/fileMatcher.js') as {
    FileMatcher: new (from: string, to: string, expand: (s: string) => string, patterns: string[]) => {
      createFilter(): (file: string, stat: Pick<Stats, 'isDirectory'>) => boolean;
    };
  };
  const config = parse(readFileSync(path.join(repo, 'electron-builder.yml'), 'utf8')) as { asarUnpack: string[]; npmRebuild: boolean };

  it('has better-sqlite3 rebuilt for Electron and its module outside app.asar, where Electron can load it', () => {
    expect(config.npmRebuild).toBe(true);
    const unpacked = new FileMatcher(repo, repo, (s) => s, config.asarUnpack).createFilter();
    const file = { isDirectory: () => false };
    expect(unpacked(path.join(repo, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'), file)).toBe(true);
    expect(unpacked(path.join(repo, 'node_modules/better-sqlite3/lib/database.js'), file)).toBe(true);
    expect(unpacked(path.join(repo, 'dist/main/electron-main.cjs'), file)).toBe(false);
  });
});

describe('isPackagedApp', () => {
  it('is true for code inside the resources folder, with or without asar', () => {
    const resources = '/opt/GPU Share/resources';
    expect(isPackagedApp({ resourcesPath: resources, codeDir: `${resources}/app.asar/dist/main` })).toBe(true);
    expect(isPackagedApp({ resourcesPath: resources, codeDir: `${resources}/app/dist/main` })).toBe(true);
  });

  it('is true inside app.asar even where resourcesPath is not set (Electron run as Node)', () => {
    expect(isPackagedApp({ resourcesPath: undefined, codeDir: '/opt/GPU Share/resources/app.asar/dist/main' })).toBe(true);
    expect(isPackagedApp({ resourcesPath: undefined, codeDir: 'C:\\Program Files\\GPU Share\\resources\\app.asar\\dist\\main' })).toBe(true);
  });

  it("is false for a checkout, whose resourcesPath is Electron's own folder, and for a look-alike name", () => {
    expect(isPackagedApp({ resourcesPath: '/home/me/gpu-share/node_modules/electron/dist/resources', codeDir: '/home/me/gpu-share/dist/main' })).toBe(false);
    expect(isPackagedApp({ resourcesPath: '/r', codeDir: '/r' })).toBe(false);
    expect(isPackagedApp({ resourcesPath: '/r', codeDir: '/r-other/dist/main' })).toBe(false);
    expect(isPackagedApp({ resourcesPath: undefined, codeDir: '/home/me/my-app.asar.d/dist/main' })).toBe(false);
  });
});

describe('this process', () => {
  it('is plain Node here: its facts name the installed better-sqlite3, and the default build is used', () => {
    const facts = currentRuntimeFacts();
    const manifest = JSON.parse(readFileSync(path.join(repo, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string };
    expect(facts).toMatchObject({
      electronVersion: undefined,
      platform: process.platform,
      arch: process.arch,
      sqlitePackageDir: path.join(repo, 'node_modules/better-sqlite3'),
      sqliteVersion: manifest.version,
    });
    expect(sqliteBindingForThisProcess()).toBeUndefined();
  });

  it('openStateDb under Electron from a checkout refuses clearly when the Electron build is missing', () => {
    const facts = currentRuntimeFacts();
    // A version no build can exist for, so the real node_modules/.cache is never written or matched.
    const electronVersion = '0.0.0-test';
    Object.defineProperty(process.versions, 'electron', { value: electronVersion, configurable: true, enumerable: true });
    try {
      expect(() => openStateDb(tempDataDir(), { onWarning: () => undefined })).toThrow(ElectronSqliteMissingError);
      expect(() => openStateDb(tempDataDir(), { onWarning: () => undefined })).toThrow(
        `${electronBindingPath({ ...facts, electronVersion })} does not exist`,
      );
    } finally {
      delete (process.versions as { electron?: string }).electron;
    }
  });
});
