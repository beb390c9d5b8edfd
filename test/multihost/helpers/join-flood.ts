/**
 * Starts the join flood (join-flood-main.ts, bundled once per test process like the fault proxy) on a namespace
 * host against the app's coordinator, pinned to its certificate, and reads its result. The bundle goes in the
 * case's teardown (releaseJoinFloodBundle).
 */
import { rmSync } from 'node:fs';
import { bundleEntry } from '../../integration/helpers/agent-bundle';
import type { App } from './app';
import type { Host } from './hosts';
import type { HostProcess } from './host-process';
import { repoRoot } from './paths';

let bundled: Promise<string> | null = null;

/** How the flood's joins were answered: how many were sent, in how many seconds, and `httpNNN` counts (http0: no answer). */
export type FloodResult = { sent: number; seconds: number } & Record<string, number>;

export interface JoinFlood {
  proc: HostProcess;
  /** Its result, once it has run its `seconds` (rejects if it fails or prints none within `timeoutMs`). */
  result(timeoutMs: number): Promise<FloodResult>;
}

/** Floods `app` with signed joins from each of `addresses` (held by `host`) for `seconds`; resolves once it runs. */
export async function startJoinFlood(host: Host, app: App, addresses: string[], seconds: number): Promise<JoinFlood> {
  if (!app.join.certSha256) throw new Error('the join flood speaks HTTPS only: start the app with a coordinator address beyond loopback');
  bundled ??= bundleEntry('test/multihost/helpers/join-flood-main.ts', 'join-flood', repoRoot);
  const entry = await bundled;
  const argv = [process.execPath, entry, app.join.url.origin, app.join.certSha256, addresses.join(','), String(seconds)];
  const proc = host.spawn(argv, { env: { PATH: process.env.PATH, GPU_SHARE_JOIN_TOKEN: app.join.token }, label: `${host.name}:join-flood` });
  await proc.waitForLine(/^join-flood: started$/, 30_000);
  return {
    proc,
    result: async (timeoutMs) => JSON.parse((await proc.waitForLine(/^\{"sent".*\}$/, timeoutMs))[0]) as FloodResult,
  };
}

/** Removes this process's bundle (teardown). */
export async function releaseJoinFloodBundle(): Promise<void> {
  const file = await bundled?.catch(() => null);
  bundled = null;
  if (file) rmSync(file, { force: true });
}
