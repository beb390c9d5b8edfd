/**
 * Bundles the standalone worker agent (src-main/cli/agent-process.ts) the way scripts/build.mjs does, into a
 * private file. Tests and benchmarks then run the agent from the current source without rebuilding dist/,
 * which other suites may be reading at the same moment.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/** The repository root: the nearest folder up from the working directory whose package.json is gpu-share's. */
export function findRepoRoot(from = process.cwd()): string {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'gpu-share') return dir;
    if (path.dirname(dir) === dir) throw new Error(`not inside the gpu-share repository (looked up from ${from}); run from the repo root`);
  }
}

/**
 * Bundles one TypeScript entry (repo-relative) to test-results/agent-bundle/<name>-<pid>.cjs. The folder is two
 * levels under the repo root, so the bundle finds node_modules and assets/ exactly as dist/main/*.cjs does.
 */
export async function bundleEntry(entry: string, name: string, root = findRepoRoot()): Promise<string> {
  const dir = path.join(root, 'test-results', 'agent-bundle');
  mkdirSync(dir, { recursive: true });
  const outfile = path.join(dir, `${name}-${process.pid}.cjs`);
  await build({
    entryPoints: [path.join(root, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    sourcemap: 'inline',
    logLevel: 'warning',
  });
  return outfile;
}

/** The standalone worker agent, with the same esbuild options as scripts/build.mjs uses for dist/main/agent-process.cjs. */
export function bundleAgent(root = findRepoRoot()): Promise<string> {
  return bundleEntry('src-main/cli/agent-process.ts', 'agent-process', root);
}
