/**
 * Starts the fault proxy (fault-proxy-main.ts, bundled once per test process) inside a namespace host, and
 * counts the faults it reports. Also used with faults off as a relay from a Unix socket to a host's own
 * address, which is how the test process talks to the app's API inside host A.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { bundleEntry } from '../../integration/helpers/agent-bundle';
import type { FaultPlan } from './fault-proxy';
import type { Host } from './hosts';
import type { HostProcess } from './host-process';
import { isPidAlive } from '../../../src-main/platform/files/errno';
import { repoRoot } from './paths';

const bundleDir = path.join(repoRoot, 'test-results', 'agent-bundle');
const BUNDLE = /^fault-proxy-(\d+)\.cjs$/;
let bundled: Promise<string> | null = null;

/** The bundled proxy entry (fault-proxy-<pid>.cjs), made on first use; bundles of dead test processes are swept. */
export function proxyBundle(): Promise<string> {
  for (const name of existsSync(bundleDir) ? readdirSync(bundleDir) : []) {
    const m = BUNDLE.exec(name);
    if (m && !isPidAlive(Number(m[1]))) rmSync(path.join(bundleDir, name), { force: true });
  }
  bundled ??= bundleEntry('test/multihost/helpers/fault-proxy-main.ts', 'fault-proxy', repoRoot);
  return bundled;
}

/** Removes this process's bundle (teardown). */
export async function releaseProxyBundle(): Promise<void> {
  const file = await bundled;
  bundled = null;
  if (file) rmSync(file, { force: true });
}

export interface ProxyOnHost {
  proc: HostProcess;
  /** "host:port" or "unix:/path" it listens on. */
  listen: string;
  stalls(): number;
  drops(): number;
}

/** Starts a proxy on `host` and waits until it listens. `plan` undefined = a plain relay. */
export async function startProxy(host: Host, listen: string, target: string, plan?: Partial<FaultPlan>, label = `${host.name}:proxy`): Promise<ProxyOnHost> {
  const entry = await proxyBundle();
  const argv = [process.execPath, entry, '--listen', listen, '--target', target, ...(plan ? ['--plan', JSON.stringify(plan)] : [])];
  const proc = host.spawn(argv, { label });
  await proc.waitForLine(/^fault-proxy listening on /, 15_000);
  const count = (kind: string) => proc.lines.filter((l) => l.text.startsWith(`fault-proxy: ${kind} `)).length;
  return { proc, listen, stalls: () => count('stall'), drops: () => count('drop') };
}
