/**
 * The folder the app keeps its cluster.yaml, tokens and worker data in. Matches Electron's
 * app.getPath('userData') for productName "GPU Share", so the desktop app, `gpu-share serve` and the
 * CLI all see the same cluster. GPU_SHARE_HOME overrides it (tests, several clusters side by side).
 */
import os from 'node:os';
import path from 'node:path';
import { xdgBaseDir } from './xdg-base-dir';

export const PRODUCT_NAME = 'GPU Share';

export function defaultUserDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.GPU_SHARE_HOME) return path.resolve(env.GPU_SHARE_HOME);
  const home = env.HOME ?? env.USERPROFILE ?? os.homedir();
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', PRODUCT_NAME);
  if (platform === 'win32') return path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), PRODUCT_NAME);
  return path.join(xdgBaseDir(env.XDG_CONFIG_HOME, path.join(home, '.config')), PRODUCT_NAME);
}

export function defaultClusterPath(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  return path.join(defaultUserDataDir(env, platform), 'cluster.yaml');
}
