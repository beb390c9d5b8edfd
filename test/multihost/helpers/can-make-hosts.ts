/**
 * Whether this machine can build namespace hosts (and run the app on them), and what a test does when it
 * cannot: skip with the reason printed, except under CI, where a skip would silently stop these tests from
 * running for good, so it fails the run instead.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { TORCH_PYTHON } from '../../integration/helpers/agent-handle';
import { namespaceName, removeNamespace, track } from './namespace-registry';
import { distDir } from './paths';
import { shQuiet } from './sh';

export type Capability = { ok: true } | { ok: false; reason: string };

function hasCommand(cmd: string, args: string[], timeout = 10_000): boolean {
  try {
    execFileSync(cmd, args, { stdio: 'ignore', timeout });
    return true;
  } catch {
    return false;
  }
}

let hostsCache: Capability | null = null;

/** Linux, root, ip/nsenter/unshare/tc present, and a namespace can really be made and removed. */
export function canMakeHosts(): Capability {
  if (hostsCache) return hostsCache;
  hostsCache = probeHosts();
  return hostsCache;
}

function probeHosts(): Capability {
  if (process.platform !== 'linux') return { ok: false, reason: `namespace hosts need Linux (this is ${process.platform})` };
  if (process.getuid?.() !== 0) return { ok: false, reason: 'namespace hosts need root (ip netns add); run as root or in CI' };
  for (const [cmd, args] of [['ip', ['-V']], ['nsenter', ['--version']], ['unshare', ['--version']], ['tc', ['-V']]] as const) {
    if (!hasCommand(cmd, [...args])) return { ok: false, reason: `\`${cmd}\` is missing (Debian: iproute2 / util-linux)` };
  }
  const probe = namespaceName('probe');
  track(probe);
  const made = shQuiet('ip', ['netns', 'add', probe]);
  removeNamespace(probe);
  if (!made.ok) return { ok: false, reason: `cannot create a network namespace: ${made.out}` };
  return { ok: true };
}

/** Hosts, plus what the app cases need: the built app (dist/) and a Python with torch for torchrun. */
export function canRunApp(): Capability {
  const hosts = canMakeHosts();
  if (!hosts.ok) return hosts;
  const cli = path.join(distDir, 'main', 'cli.cjs');
  if (!existsSync(cli)) return { ok: false, reason: `the app is not built (${cli} is missing): run \`npm run build\` first` };
  // `import torch` takes 1–2 s on a quiet machine and over 10 s at the load a full suite makes: a short limit
  // read a slow import as "no torch" (and failed CI).
  if (!hasCommand(TORCH_PYTHON, ['-c', 'import torch'], 90_000)) {
    return { ok: false, reason: `${TORCH_PYTHON} has no torch (Debian: apt-get install python3-torch; or set GPU_SHARE_PYTHON)` };
  }
  return { ok: true };
}

/**
 * For `describe.skipIf(!required(canMakeHosts()))`: true when the tests can run. Otherwise prints why and
 * returns false, or throws when CI=true, so CI can never pass with these tests quietly skipped.
 */
export function required(capability: Capability, what = 'multihost tests'): boolean {
  if (capability.ok) return true;
  const message = `${what} cannot run here: ${capability.reason}`;
  if (process.env.CI === 'true') throw new Error(`${message} (CI=true: a skip here would hide that they never ran)`);
  console.warn(`SKIPPED ${message}`);
  return false;
}
