/**
 * What the multihost project cases share: an agent that cannot see the project folder (its own mount namespace
 * with a tmpfs over the folder's parent), and the product's CLI run on the app's host A against the app.
 */
import { productEnv } from './app';
import { appBuild } from './app-snapshot';
import type { Testbed } from './testbed';

/** Runs the agent in a new mount namespace with a tmpfs over `hidden` (exec in place: the pid stays the agent's). */
export function hiddenWrap(hidden: string): string[] {
  return ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', `mount -t tmpfs gsmh-hide '${hidden}' && exec "$@"`, 'sh'];
}

/** `gpu-share GROUP COMMAND …` on host A with the app's data folder: (['runs', 'start', …]) → exit code and output. */
export async function appCli(tb: Testbed): Promise<(args: string[], timeoutMs?: number) => { code: number; out: string }> {
  const env = await productEnv();
  const build = await appBuild();
  const envWords = Object.entries(env).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`);
  return (args, timeoutMs = 60_000) =>
    tb.cluster.host('a').run(['env', ...envWords, process.execPath, build.cli, ...args.slice(0, 2), '--data-dir', tb.app.dataDir, ...args.slice(2)], timeoutMs);
}
