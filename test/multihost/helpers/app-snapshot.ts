/**
 * A private copy of the built app (dist/main/cli.cjs and the page in dist/renderer) for one test file. A
 * case runs for minutes, and on a shared machine someone may run `npm run build` meanwhile, which empties
 * dist/ for a moment and swaps the code under a running case; the copy keeps one case on one build. The
 * copy lives under the repo (test-results/), so the bundle still finds node_modules by walking up.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '../../integration/helpers/wait';
import { isPidAlive } from '../../../src-main/platform/files/errno';
import { distDir, repoRoot } from './paths';

const PREFIX = 'multihost-app-';
const resultsDir = path.join(repoRoot, 'test-results');

export interface AppBuild {
  /** The CLI bundle (what bin/gpu-share.cjs loads). */
  cli: string;
  /** The built page, passed as GPU_SHARE_STATIC_DIR. */
  staticDir: string;
}

let snapshot: Promise<AppBuild> | null = null;

async function copyBuild(): Promise<AppBuild> {
  const dist = distDir;
  const cli = path.join(dist, 'main', 'cli.cjs');
  const page = path.join(dist, 'renderer', 'index.html');
  // A build in progress removes and rewrites these; wait (bounded) until both are there.
  await waitFor(`the built app (${cli} and ${page}): run \`npm run build\``, () => existsSync(cli) && existsSync(page), { timeoutMs: 60_000, recheckMs: 500 });
  // Copies of test processes that died before their teardown.
  for (const name of existsSync(resultsDir) ? readdirSync(resultsDir) : []) {
    const pid = Number(name.startsWith(PREFIX) ? name.slice(PREFIX.length) : NaN);
    if (Number.isInteger(pid) && !isPidAlive(pid)) rmSync(path.join(resultsDir, name), { recursive: true, force: true });
  }
  const dir = path.join(resultsDir, `${PREFIX}${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, 'main'), { recursive: true });
  cpSync(cli, path.join(dir, 'main', 'cli.cjs'));
  if (existsSync(`${cli}.map`)) cpSync(`${cli}.map`, path.join(dir, 'main', 'cli.cjs.map'));
  cpSync(path.join(dist, 'renderer'), path.join(dir, 'renderer'), { recursive: true });
  return { cli: path.join(dir, 'main', 'cli.cjs'), staticDir: path.join(dir, 'renderer') };
}

/** The copy for this test process, made on first use. */
export function appBuild(): Promise<AppBuild> {
  snapshot ??= copyBuild();
  return snapshot;
}

/** Removes the copy (teardown); the next appBuild() makes a fresh one. */
export function releaseBuild(): void {
  snapshot = null;
  rmSync(path.join(resultsDir, `${PREFIX}${process.pid}`), { recursive: true, force: true });
}
