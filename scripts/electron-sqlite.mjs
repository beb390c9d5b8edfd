// Builds better-sqlite3 for Electron into node_modules/.cache/gpu-share/, next to (never over) the Node build that
// `npm install` put in node_modules/better-sqlite3: the CLI and tests keep running under Node from the same
// checkout. `npm start` calls ensureElectronSqlite() before it launches Electron; run this file by hand
// (`node scripts/electron-sqlite.mjs [--force]`) to build it again. The app finds the file by the same rule
// (src-main/core/state/native-binding.ts). Needs the internet: a prebuilt binary from better-sqlite3's GitHub
// releases, else Electron's headers from electronjs.org and a C++ toolchain to compile.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const BINDING_FILE = 'better_sqlite3.node';
export const MANUAL_COMMAND = 'node scripts/electron-sqlite.mjs';
// Where Electron publishes its headers (@electron/rebuild's default); ~/.electron-gyp is where it keeps them too.
const ELECTRON_HEADERS = 'https://www.electronjs.org/headers';
const BUILD_FOLDER = /^better-sqlite3-(.+)-electron-(.+)-([^-]+)-([^-]+)$/;

/** The same path as native-binding.ts's electronBindingPath(). */
export function electronBindingPath({ sqlitePackageDir, sqliteVersion, electronVersion, platform, arch }) {
  const folder = `better-sqlite3-${sqliteVersion}-electron-${electronVersion}-${platform}-${arch}`;
  return path.join(path.dirname(sqlitePackageDir), '.cache', 'gpu-share', folder, BINDING_FILE);
}

function installedVersion(packageDir) {
  const manifest = path.join(packageDir, 'package.json');
  return existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')).version : null;
}

/** Electron builds already in the cache for this platform and architecture. */
function otherBuilds(cacheDir, platform, arch) {
  if (!existsSync(cacheDir)) return [];
  return readdirSync(cacheDir)
    .map((name) => ({ name, match: BUILD_FOLDER.exec(name) }))
    .filter(({ name, match }) => match && match[3] === platform && match[4] === arch && existsSync(path.join(cacheDir, name, BINDING_FILE)))
    .map(({ name, match }) => ({ folder: path.join(cacheDir, name), sqliteVersion: match[1], electronVersion: match[2] }));
}

/**
 * Is the Electron build there for the installed Electron and better-sqlite3? { current, path, reason, … };
 * `reason` says why not (nothing built yet, built for another Electron or better-sqlite3, a package missing).
 */
export function electronSqliteStatus(root, { platform = process.platform, arch = process.arch } = {}) {
  const modules = path.join(root, 'node_modules');
  const sqlitePackageDir = path.join(modules, 'better-sqlite3');
  const electronVersion = installedVersion(path.join(modules, 'electron'));
  const sqliteVersion = installedVersion(sqlitePackageDir);
  if (!electronVersion) return { current: false, reason: 'node_modules/electron is not installed (run `npm install`)' };
  if (!sqliteVersion) return { current: false, reason: 'node_modules/better-sqlite3 is not installed (run `npm install`)' };
  const facts = { sqlitePackageDir, sqliteVersion, electronVersion, platform, arch };
  const bindingPath = electronBindingPath(facts);
  if (existsSync(bindingPath)) return { current: true, path: bindingPath, ...facts };
  const [previous] = otherBuilds(path.dirname(path.dirname(bindingPath)), platform, arch);
  const reason = previous
    ? `the one built is for Electron ${previous.electronVersion} and better-sqlite3 ${previous.sqliteVersion}; ` +
      `Electron ${electronVersion} and better-sqlite3 ${sqliteVersion} are installed now`
    : 'it has not been built yet';
  return { current: false, path: bindingPath, reason, ...facts };
}

// npm passes its config on as npm_config_* variables, and node-gyp and prebuild-install obey them over their own
// arguments: a `nodedir` or `target` set for Node (as on machines that build from source) would compile
// against Node's headers again. npm_package_* describe GPU Share, not better-sqlite3 (prebuild-install reads
// them). Proxy, certificate and mirror settings pass through.
const NODE_TARGET_KEYS = ['nodedir', 'target', 'runtime', 'disturl', 'dist_url', 'devdir', 'arch', 'target_arch', 'platform', 'build_from_source'];

/** The environment for the build tools: npm's settings that point a build at Node, and our package's, removed. */
export function buildEnv(env = process.env) {
  const out = {};
  for (const [key, value] of Object.entries(env)) {
    const npmKey = /^npm_config_(.+)$/i.exec(key)?.[1]?.toLowerCase().replaceAll('-', '_');
    if (npmKey && NODE_TARGET_KEYS.includes(npmKey)) continue;
    if (/^npm_package_/i.test(key)) continue;
    out[key] = value;
  }
  return out;
}

/** npm's `build-from-source` (all packages, or better-sqlite3 by name): skip the prebuilt download. */
export function buildFromSourceRequested(env = process.env) {
  const value = Object.entries(env).find(([key]) => /^npm_config_build[-_]from[-_]source$/i.test(key))?.[1];
  return value === 'true' || value === 'better-sqlite3';
}

function run(command, args, cwd, env) {
  return spawnSync(command, args, { cwd, env, stdio: 'inherit' }).status === 0;
}

/** A package's file as `from` would require it, or null. */
function resolveFrom(from, request) {
  try {
    return createRequire(path.join(from, 'package.json')).resolve(request);
  } catch {
    return null;
  }
}

/** node-gyp from node_modules (electron-builder's), else the one npm runs scripts with. */
function findNodeGyp(root, env) {
  const fromNpm = env.npm_config_node_gyp && existsSync(env.npm_config_node_gyp) ? env.npm_config_node_gyp : null;
  return resolveFrom(root, 'node-gyp/bin/node-gyp.js') ?? fromNpm;
}

/** Compiles (or fetches) the module in `staging`, a copy of better-sqlite3; true when the .node is there. */
function buildInStaging(root, staging, { sqlitePackageDir, electronVersion, platform, arch }, env, log) {
  const built = path.join(staging, 'build', 'Release', BINDING_FILE);
  const tools = buildEnv(env);
  // better-sqlite3's own dependency, resolved from the package it belongs to.
  const prebuild = resolveFrom(sqlitePackageDir, 'prebuild-install/bin.js');
  if (prebuild && !buildFromSourceRequested(env)) {
    log('  fetching a prebuilt binary from better-sqlite3\'s GitHub releases…');
    const args = [prebuild, '--runtime=electron', `--target=${electronVersion}`, `--arch=${arch}`, `--platform=${platform}`];
    if (run(process.execPath, args, staging, tools) && existsSync(built)) return true;
    log('  no prebuilt binary; compiling from source instead (needs Python 3 and a C++ compiler)…');
  }
  const nodeGyp = findNodeGyp(root, env);
  if (!nodeGyp) {
    throw new ElectronSqliteBuildError(electronVersion, 'node-gyp is not installed (it comes with npm and electron-builder): run `npm install`');
  }
  const devdir = path.join(os.homedir(), '.electron-gyp');
  const target = ['--runtime=electron', `--target=${electronVersion}`, `--arch=${arch}`, `--dist-url=${ELECTRON_HEADERS}`, `--devdir=${devdir}`];
  const args = [nodeGyp, 'rebuild', '--release', ...target];
  return run(process.execPath, args, staging, tools) && existsSync(built);
}

/** Loads the build in Electron run as Node: an ABI mismatch shows here, not when the window opens. */
function loadsInElectron(electronBinary, sqlitePackageDir, bindingPath, env) {
  const open = `new (require(${JSON.stringify(sqlitePackageDir)}))(':memory:', { nativeBinding: ${JSON.stringify(bindingPath)} })`;
  const probe = `${open}.prepare('select 1').get();`;
  const result = spawnSync(electronBinary, ['-e', probe], { env: { ...env, ELECTRON_RUN_AS_NODE: '1' }, encoding: 'utf8' });
  return result.status === 0 ? null : (result.stderr || result.error?.message || `exit ${result.status}`).trim();
}

export class ElectronSqliteBuildError extends Error {
  constructor(electronVersion, detail) {
    super(
      `Could not build the SQLite module for Electron ${electronVersion}${detail ? `: ${detail}` : ' (see above)'}. ` +
        'It needs the internet (a prebuilt binary from GitHub, or Electron\'s headers from electronjs.org) and, to compile, ' +
        `Python 3 and a C++ compiler. Then run \`${MANUAL_COMMAND}\` (or \`npm start\` again). ` +
        'Meanwhile `npm start -- --headless` runs the app in a browser tab, which does not need it.',
    );
    this.name = 'ElectronSqliteBuildError';
  }
}

function buildAndInstall(status, root, { electronBinary, env, log }) {
  const staging = mkdtempSync(path.join(os.tmpdir(), 'gpu-share-electron-sqlite-'));
  try {
    cpSync(status.sqlitePackageDir, staging, {
      recursive: true,
      // A linked package (pnpm, npm link) is copied, not linked: the build must not write into it.
      dereference: true,
      filter: (source) => !['build', 'node_modules'].includes(path.relative(status.sqlitePackageDir, source).split(path.sep)[0]),
    });
    if (!buildInStaging(root, staging, status, env, log)) throw new ElectronSqliteBuildError(status.electronVersion);
    mkdirSync(path.dirname(status.path), { recursive: true });
    // Copied next to its final name, then renamed: an interrupted build never leaves a half-written module.
    // (It keeps the .node ending: better-sqlite3 appends one to a nativeBinding path without it.)
    const partial = path.join(path.dirname(status.path), `partial-${BINDING_FILE}`);
    copyFileSync(path.join(staging, 'build', 'Release', BINDING_FILE), partial);
    const refused = electronBinary ? loadsInElectron(electronBinary, status.sqlitePackageDir, partial, env) : null;
    if (refused) {
      rmSync(partial, { force: true });
      throw new ElectronSqliteBuildError(status.electronVersion, `Electron would not load the result: ${refused}`);
    }
    renameSync(partial, status.path);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  for (const old of otherBuilds(path.dirname(path.dirname(status.path)), process.platform, process.arch)) {
    if (old.folder !== path.dirname(status.path)) rmSync(old.folder, { recursive: true, force: true });
  }
}

/**
 * Builds the Electron copy of better-sqlite3 in a temporary copy of its package and moves the .node into the
 * cache; node_modules/better-sqlite3 is only read. With `electronBinary`, checks that Electron loads it. Every
 * failure is an ElectronSqliteBuildError that says what to do.
 */
export function buildElectronSqlite(root, { electronBinary, env = process.env, log = console.log } = {}) {
  const status = electronSqliteStatus(root);
  if (!status.path) throw new ElectronSqliteBuildError('(version unknown)', status.reason);
  try {
    buildAndInstall(status, root, { electronBinary, env, log });
  } catch (error) {
    if (error instanceof ElectronSqliteBuildError) throw error;
    throw new ElectronSqliteBuildError(status.electronVersion, error instanceof Error ? error.message : String(error));
  }
  return status.path;
}

/** `npm start`'s step: builds the Electron copy once (and again after Electron or better-sqlite3 changes). */
export function ensureElectronSqlite(root, options = {}) {
  const status = electronSqliteStatus(root);
  if (status.current) return status.path;
  const log = options.log ?? console.log;
  log(`Building the SQLite module for Electron ${status.electronVersion ?? ''} (once, ~1 min; ${status.reason})…`);
  const built = buildElectronSqlite(root, options);
  log(`Built ${path.relative(root, built)}.`);
  return built;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  const force = process.argv.includes('--force');
  try {
    const status = electronSqliteStatus(root);
    if (status.current && !force) console.log(`${path.relative(root, status.path)} is already built (--force builds it again).`);
    else {
      // Imported here, not at the top: start.mjs imports this file lazily too, so neither waits on the other.
      const { findElectronBinary } = await import('./start.mjs');
      const electron = findElectronBinary(root);
      // Checked by loading it in Electron when Electron's binary is installed.
      const built = buildElectronSqlite(root, electron.found ? { electronBinary: electron.path } : {});
      console.log(`Built ${path.relative(root, built)}.`);
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
