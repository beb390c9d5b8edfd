// `npm start`: the desktop app when Electron's binary is installed, else headless mode (`gpu-share serve`) with a
// note on how to get the window. Builds first when dist/ is missing or older than the sources, and before the
// first Electron launch builds the SQLite module for Electron (scripts/electron-sqlite.mjs: the only download it
// may start). Never downloads Electron: its own index.js would fetch the binary when missing, so it is not imported.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.dirname(here);

/** Splits our own flag off the arguments that go on to the app. */
export function splitArgs(argv) {
  const forward = argv.filter((arg) => arg !== '--headless');
  return { headless: forward.length !== argv.length, forward };
}

/**
 * Where Electron's binary is, by the same rule as the electron package's index.js (path.txt names the file
 * under dist/, or under ELECTRON_OVERRIDE_DIST_PATH), without its download fallback.
 */
export function findElectronBinary(root, env = process.env) {
  const pkgDir = path.join(root, 'node_modules', 'electron');
  const pathFile = path.join(pkgDir, 'path.txt');
  const named = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : '';
  const override = env.ELECTRON_OVERRIDE_DIST_PATH;
  if (!named && !override) return { found: false, reason: `${path.relative(root, pathFile)} does not exist` };
  const binary = path.join(override || path.join(pkgDir, 'dist'), named || 'electron');
  if (!existsSync(binary)) return { found: false, reason: `${binary} does not exist` };
  return { found: true, path: binary };
}

const BUILD_INPUTS = ['src-main', 'src-shared', 'src-renderer', 'scripts/build.mjs', 'vite.config.ts'];

function newestMtime(target) {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(target)) newest = Math.max(newest, newestMtime(path.join(target, entry)));
  return newest;
}

/** The bundles `npm start` needs; the renderer only once there is one to build. */
export function buildOutputs(root) {
  const outputs = ['dist/main/cli.cjs', 'dist/main/electron-main.cjs', 'dist/main/preload.cjs'];
  if (existsSync(path.join(root, 'src-renderer', 'index.html'))) outputs.push('dist/renderer/index.html');
  return outputs;
}

/** Why a build is needed (an output missing or older than a source), or null when dist/ is up to date. */
export function staleReason(root) {
  let oldestOutput = Infinity;
  for (const output of buildOutputs(root)) {
    const file = path.join(root, output);
    if (!existsSync(file)) return `${output} is missing`;
    oldestOutput = Math.min(oldestOutput, statSync(file).mtimeMs);
  }
  for (const input of BUILD_INPUTS) {
    if (newestMtime(path.join(root, input)) > oldestOutput) return `${input} changed since the last build`;
  }
  return null;
}

export function headlessNotice(url, forced) {
  if (forced) return `Starting GPU Share in headless mode (--headless) — open ${url}`;
  return (
    "Electron's binary is not installed on this machine (its download is skipped at install). " +
    `Starting GPU Share in headless mode instead — open ${url}. ` +
    'To get the desktop window run `npx install-electron` (downloads Electron from GitHub), then `npm start` again.'
  );
}

/** The line `gpu-share serve` prints once it listens. */
export function servedUrl(line) {
  const match = /GPU Share is running: (\S+)/.exec(line);
  return match ? match[1] : null;
}

function exitLike(code, signal) {
  if (code !== null) process.exit(code);
  process.exit(signal ? 128 + (({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 })[signal] ?? 0) : 1);
}

/**
 * Passes our signals on to the child. Installed before the child is spawned: a signal that arrives in between
 * would otherwise kill this process and orphan the child. Ctrl+C already reaches the child through the
 * terminal's process group, so SIGINT is forwarded only if the child is still running a moment later
 * (someone signalled this process alone).
 */
function signalForwarder() {
  let child = null;
  let pending = null;
  const running = () => child !== null && child.exitCode === null && child.signalCode === null;
  const forward = (signal) => {
    if (child === null) pending = signal;
    else if (running()) child.kill(signal);
  };
  process.on('SIGTERM', () => forward('SIGTERM'));
  process.on('SIGHUP', () => forward('SIGHUP'));
  process.on('SIGINT', () => setTimeout(() => forward('SIGINT'), 1000));
  return {
    attach(spawned) {
      child = spawned;
      if (pending) forward(pending);
    },
  };
}

function childEnv() {
  const env = { ...process.env };
  // Set in some shells and CI images; it would start Electron as plain Node.
  delete env.ELECTRON_RUN_AS_NODE;
  return env;
}

function runElectron(binary, root, args) {
  const signals = signalForwarder();
  const child = spawn(binary, [root, ...args], { stdio: 'inherit', env: childEnv() });
  signals.attach(child);
  child.on('error', (error) => {
    console.error(`Could not start Electron (${binary}): ${error.message}. Try \`npm start -- --headless\`.`);
    process.exit(1);
  });
  child.on('exit', exitLike);
}

function runHeadless(root, args, forced) {
  const cli = path.join(root, 'bin', 'gpu-share.cjs');
  const signals = signalForwarder();
  const child = spawn(process.execPath, [cli, 'serve', ...args], { stdio: ['inherit', 'pipe', 'inherit'], env: childEnv() });
  signals.attach(child);
  let told = false;
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    process.stdout.write(`${line}\n`);
    const url = told ? null : servedUrl(line);
    if (url) {
      told = true;
      process.stdout.write(`\n${headlessNotice(url, forced)}\n\n`);
    }
  });
  child.on('exit', (code, signal) => {
    if (!told && !forced) {
      process.stdout.write(
        "\nElectron's binary is not installed on this machine (its download is skipped at install), and headless mode " +
          'stopped before it was ready (see above). To get the desktop window run `npx install-electron` ' +
          '(downloads Electron from GitHub), then `npm start` again.\n',
      );
    }
    exitLike(code, signal);
  });
}

export async function main(argv = process.argv.slice(2), root = repoRoot) {
  const { headless, forward } = splitArgs(argv);
  const reason = staleReason(root);
  if (reason) {
    console.log(`Building GPU Share (${reason})…`);
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) {
      console.error('The build failed (see above). Fix it, then run `npm start` again.');
      process.exit(1);
    }
  }
  const electron = headless ? { found: false } : findElectronBinary(root);
  if (!electron.found) return runHeadless(root, forward, headless);
  // Loaded only for Electron: headless mode runs under Node and needs none of it.
  const { ElectronSqliteBuildError, ensureElectronSqlite } = await import('./electron-sqlite.mjs');
  try {
    ensureElectronSqlite(root, { electronBinary: electron.path });
  } catch (error) {
    if (!(error instanceof ElectronSqliteBuildError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  runElectron(electron.path, root, forward);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main();
