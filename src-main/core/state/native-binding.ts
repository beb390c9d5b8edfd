/**
 * Which compiled better-sqlite3 the state database loads. better-sqlite3 is built against V8's own API (not
 * N-API), so a build loads only in the runtime it was compiled for. node_modules holds Node's build (`npm
 * install`): plain Node (the CLI, `gpu-share serve`, tests) uses it as always. Electron run from a checkout gets a
 * build of its own, kept apart in node_modules/.cache/gpu-share/ so the two never overwrite each other
 * (scripts/electron-sqlite.mjs makes it; `npm start` runs it when missing). A packaged app needs neither:
 * electron-builder rebuilt its node_modules for Electron.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export const SQLITE_BINDING_FILE = 'better_sqlite3.node';

/** What decides the binding; process facts in the app, plain values in tests. */
export interface RuntimeFacts {
  /** process.versions.electron: undefined under plain Node. */
  electronVersion: string | undefined;
  platform: string;
  arch: string;
  /** process.resourcesPath: set by Electron (its own resources folder in a checkout, the app's when packaged). */
  resourcesPath: string | undefined;
  /** The folder of the running code (__dirname of the bundle). */
  codeDir: string;
  /** node_modules/better-sqlite3 as the running code resolves it, and its version. */
  sqlitePackageDir: string;
  sqliteVersion: string;
}

/** What names one Electron build: the runtime, the module's version, the machine. */
export type ElectronBuildFacts = Pick<RuntimeFacts, 'sqlitePackageDir' | 'sqliteVersion' | 'platform' | 'arch'> & { electronVersion: string };

/**
 * Where the Electron build for these versions lives. scripts/electron-sqlite.mjs computes the same path
 * (test/unit/scripts/electron-sqlite.test.ts checks that both agree).
 */
export function electronBindingPath(facts: ElectronBuildFacts): string {
  const folder = `better-sqlite3-${facts.sqliteVersion}-electron-${facts.electronVersion}-${facts.platform}-${facts.arch}`;
  return path.join(path.dirname(facts.sqlitePackageDir), '.cache', 'gpu-share', folder, SQLITE_BINDING_FILE);
}

/** A packaged app runs from inside its resources folder (resources/app.asar/dist/main). */
export function isPackagedApp(facts: Pick<RuntimeFacts, 'resourcesPath' | 'codeDir'>): boolean {
  if (facts.codeDir.split(/[\\/]/).includes('app.asar')) return true;
  if (!facts.resourcesPath) return false;
  const relative = path.relative(facts.resourcesPath, facts.codeDir);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

export class ElectronSqliteMissingError extends Error {
  constructor(
    readonly bindingPath: string,
    facts: ElectronBuildFacts,
  ) {
    // node_modules/better-sqlite3 → the checkout the command runs in.
    const checkout = path.dirname(path.dirname(facts.sqlitePackageDir));
    super(
      `GPU Share runs under Electron ${facts.electronVersion}, which needs its own build of the SQLite module ` +
        `(better-sqlite3 ${facts.sqliteVersion}), and ${bindingPath} does not exist. Build it once with \`npm start\`, ` +
        `or with \`node scripts/electron-sqlite.mjs\` in ${checkout} (needs the internet, about a minute).`,
    );
    this.name = 'ElectronSqliteMissingError';
  }
}

/**
 * The `nativeBinding` to give better-sqlite3: undefined for node_modules' own build (plain Node, packaged app),
 * else the Electron build's path. Throws ElectronSqliteMissingError when that build is not there.
 */
export function chooseSqliteBinding(facts: RuntimeFacts, exists: (file: string) => boolean = existsSync): string | undefined {
  const { electronVersion } = facts;
  if (!electronVersion || isPackagedApp(facts)) return undefined;
  const binding = electronBindingPath({ ...facts, electronVersion });
  if (!exists(binding)) throw new ElectronSqliteMissingError(binding, { ...facts, electronVersion });
  return binding;
}

/** This process's facts; better-sqlite3 is resolved from the running code, as its `import` is. */
export function currentRuntimeFacts(codeDir: string = typeof __dirname === 'string' ? __dirname : process.cwd()): RuntimeFacts {
  const manifest = createRequire(path.join(codeDir, 'index.js')).resolve('better-sqlite3/package.json');
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  return {
    electronVersion: process.versions.electron,
    platform: process.platform,
    arch: process.arch,
    resourcesPath: (process as NodeJS.Process & { resourcesPath?: string }).resourcesPath,
    codeDir,
    sqlitePackageDir: path.dirname(manifest),
    sqliteVersion: version,
  };
}

/** The binding for this process; under plain Node it returns at once, reading nothing. */
export function sqliteBindingForThisProcess(): string | undefined {
  if (!process.versions.electron) return undefined;
  return chooseSqliteBinding(currentRuntimeFacts());
}
