/**
 * Finds the built renderer (dist/renderer) from wherever the code runs: the CLI bundle (dist/main/cli.cjs),
 * the TypeScript sources under a test runner, or a packaged app; GPU_SHARE_STATIC_DIR overrides.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

function here(): string | null {
  return typeof __dirname === 'string' ? __dirname : null;
}

export function staticDirCandidates(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string[] {
  const dir = here();
  const candidates = [
    env.GPU_SHARE_STATIC_DIR,
    dir ? path.resolve(dir, '..', 'renderer') : undefined, // dist/main → dist/renderer
    dir ? path.resolve(dir, '..', '..', 'dist', 'renderer') : undefined, // src-main/headless → dist/renderer
    path.resolve(cwd, 'dist', 'renderer'),
  ];
  return [...new Set(candidates.filter((c): c is string => !!c))];
}

/** The first candidate holding an index.html, or null when the page has not been built. */
export function findStaticDir(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string | null {
  for (const dir of staticDirCandidates(env, cwd)) {
    if (existsSync(path.join(dir, 'index.html'))) return dir;
  }
  return null;
}
