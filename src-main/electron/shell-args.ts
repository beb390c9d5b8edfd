/** Reads the shell's own options from Electron's argv, ignoring Chromium switches and the app path. */
import path from 'node:path';

export interface ShellArgs {
  /** --cluster PATH (or --cluster=PATH), resolved against the working directory. */
  clusterPath?: string;
  /** --coordinator-host HOST: where workers join (default loopback, so only this machine can). */
  coordinatorHost?: string;
  /** --coordinator-port N. */
  coordinatorPort?: number;
  /** --trust-advertised-hosts: accept workers' advertised addresses behind NAT (see worker-gate.ts). */
  trustAdvertisedHosts?: boolean;
}

/** Value of `--name VALUE` or `--name=VALUE` at argv[i], and how many entries it used; null if argv[i] is not it. */
function valueOf(argv: readonly string[], i: number, name: string): { value: string | undefined; used: number } | null {
  const arg = argv[i]!;
  if (arg === `--${name}`) {
    const next = argv[i + 1];
    return next !== undefined && !next.startsWith('--') ? { value: next, used: 2 } : { value: undefined, used: 1 };
  }
  if (arg.startsWith(`--${name}=`)) return { value: arg.slice(name.length + 3) || undefined, used: 1 };
  return null;
}

export function parseShellArgs(argv: readonly string[], cwd: string): ShellArgs {
  const args: ShellArgs = {};
  for (let i = 0; i < argv.length; ) {
    if (argv[i] === '--trust-advertised-hosts') {
      args.trustAdvertisedHosts = true;
      i += 1;
      continue;
    }
    const cluster = valueOf(argv, i, 'cluster');
    const host = cluster ? null : valueOf(argv, i, 'coordinator-host');
    const port = cluster || host ? null : valueOf(argv, i, 'coordinator-port');
    if (cluster?.value) args.clusterPath = path.resolve(cwd, cluster.value);
    if (host?.value && /^[A-Za-z0-9.:%-]{1,255}$/.test(host.value)) args.coordinatorHost = host.value;
    if (port?.value && /^\d{1,5}$/.test(port.value) && Number(port.value) <= 65535) args.coordinatorPort = Number(port.value);
    i += (cluster ?? host ?? port)?.used ?? 1;
  }
  return args;
}
