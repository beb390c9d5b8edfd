/**
 * Finds the app's assets folder (example trainers, example cluster.yaml) wherever the code runs from:
 * the repo (src-main/core), the bundle (dist/main), or a packaged app (resources/assets via extraResources).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

export function findAssetsDir(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [
    env.GPU_SHARE_ASSETS,
    (process as NodeJS.Process & { resourcesPath?: string }).resourcesPath
      ? path.join((process as NodeJS.Process & { resourcesPath?: string }).resourcesPath!, 'assets')
      : undefined,
    // __dirname exists in the CommonJS bundle and under vitest, not when a file runs as an ES module.
    // The agent bundle on an SSH node keeps its assets beside it (~/.gpu-share/agent/<version>/assets), so a
    // worker installed as a service there finds them without GPU_SHARE_ASSETS in its unit.
    typeof __dirname === 'string' ? path.resolve(__dirname, 'assets') : undefined,
    typeof __dirname === 'string' ? path.resolve(__dirname, '..', '..', 'assets') : undefined,
    typeof __dirname === 'string' ? path.resolve(__dirname, '..', '..', '..', 'assets') : undefined,
    path.resolve(process.cwd(), 'assets'),
  ].filter((c): c is string => !!c);
  for (const dir of candidates) {
    if (existsSync(path.join(dir, 'trainers'))) return dir;
  }
  return candidates[candidates.length - 1]!;
}
