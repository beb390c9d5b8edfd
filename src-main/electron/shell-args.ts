/** Reads the shell's own options from Electron's argv, ignoring Chromium switches and the app path. */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { clusterNameProblem } from '../platform/discovery/discovery-record';

export interface ShellArgs {
  /** --cluster PATH (or --cluster=PATH), resolved against the working directory. */
  clusterPath?: string;
  /** --coordinator-host HOST: where workers join (default loopback, so only this machine can). */
  coordinatorHost?: string;
  /** --coordinator-port N. */
  coordinatorPort?: number;
  /** --trust-advertised-hosts: accept workers' advertised addresses behind NAT (see worker-gate.ts). */
  trustAdvertisedHosts?: boolean;
  /** --cluster-name NAME: the pre-shared name advertised as a tag, and the only one the join panel lists. */
  clusterName?: string;
  /** --no-advertise: never announce the coordinator on the LAN (mDNS). */
  advertise?: false;
  /** --auto-approve: every machine holding the join token is approved at its join (closed labs only). */
  autoApprove?: true;
  /** --heartbeat-timeout S (0.5 to 600), in ms: the cluster's, as `gpu-share serve --heartbeat-timeout`. */
  heartbeatTimeoutMs?: number;
  /** --max-workers N: the cluster's bound on machines joined at once, as `gpu-share serve --max-workers`. */
  maxWorkers?: number;
}

const options = {
  cluster: { type: 'string' },
  'coordinator-host': { type: 'string' },
  'coordinator-port': { type: 'string' },
  'trust-advertised-hosts': { type: 'boolean' },
  'cluster-name': { type: 'string' },
  'no-advertise': { type: 'boolean' },
  'auto-approve': { type: 'boolean' },
  'heartbeat-timeout': { type: 'string' },
  'max-workers': { type: 'string' },
} as const;

/** A value taken from the next argument that is itself a switch (`--cluster --inspect`) means the value is missing. */
function isSwitch(value: unknown, inline: boolean | undefined): boolean {
  return !inline && typeof value === 'string' && value.startsWith('-');
}

/**
 * util.parseArgs, not strict: Electron's argv also holds the app path and Chromium's own switches, which are
 * none of ours. Values that are not usable are dropped (the defaults apply) rather than refused: there is no
 * terminal to refuse them on.
 */
export function parseShellArgs(argv: readonly string[], cwd: string): ShellArgs {
  const args: ShellArgs = {};
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (isSwitch(token.value, token.inlineValue)) {
      // The switch it swallowed is read again on its own, with everything after it.
      return { ...args, ...parseShellArgs(argv.slice(token.index + 1), cwd) };
    }
    const value = typeof token.value === 'string' && token.value !== '' ? token.value : undefined;
    if (token.name === 'trust-advertised-hosts' && token.value === undefined) args.trustAdvertisedHosts = true;
    if (token.name === 'no-advertise' && token.value === undefined) args.advertise = false;
    if (token.name === 'auto-approve' && token.value === undefined) args.autoApprove = true;
    if (token.name === 'cluster-name' && value && clusterNameProblem(value) === null) args.clusterName = value;
    if (token.name === 'cluster' && value) args.clusterPath = path.resolve(cwd, value);
    if (token.name === 'coordinator-host' && value && /^[A-Za-z0-9.:%-]{1,255}$/.test(value)) args.coordinatorHost = value;
    if (token.name === 'coordinator-port' && value && /^\d{1,5}$/.test(value) && Number(value) <= 65535) args.coordinatorPort = Number(value);
    if (token.name === 'heartbeat-timeout' && value && /^\d{1,3}(\.\d+)?$/.test(value) && Number(value) >= 0.5 && Number(value) <= 600) args.heartbeatTimeoutMs = Math.round(Number(value) * 1000);
    if (token.name === 'max-workers' && value && /^\d{1,7}$/.test(value) && Number(value) >= 1 && Number(value) <= 1_000_000) args.maxWorkers = Number(value);
  }
  return args;
}
