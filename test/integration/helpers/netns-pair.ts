/**
 * Two "machines" on one: a network namespace each, joined by a veth pair, each process started in its own
 * UTS namespace with a host name nobody can resolve (as on a home LAN without DNS). Needs root and `ip`.
 * Everything made here is removed by remove(), and on process exit if a test never got that far.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { InterfaceTable } from '../../../src-main/platform/runs/local-interface';
import { isPidAlive } from '../../../src-main/platform/files/errno';

export interface NetnsHost {
  ns: string;
  /** The veth end inside the namespace. */
  ifname: string;
  addr: string;
  hostname: string;
}

export interface HostPair {
  a: NetnsHost;
  b: NetnsHost;
  remove(): void;
}

const live = new Set<string>();
let exitHookInstalled = false;

function ip(args: string[], allowFail = false): string {
  const r = spawnSync('ip', args, { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0 && !allowFail) throw new Error(`ip ${args.join(' ')} failed: ${r.error?.message ?? r.stderr.trim()}`);
  return r.stdout ?? '';
}

/** Why namespaces cannot be made here, or null when they can. */
export function netnsUnavailableReason(): string | null {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not root (ip netns needs CAP_SYS_ADMIN)';
  const probe = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  if (probe.error) return `no usable \`ip\` command: ${probe.error.message}`;
  if (probe.status !== 0) return `\`ip netns list\` failed: ${probe.stderr.trim()}`;
  if (spawnSync('unshare', ['--version']).error) return 'no `unshare` command (util-linux)';
  return null;
}

/** Kills what still runs inside one of our namespaces (only our processes can be there), then drops it. */
function destroyNamespace(ns: string): void {
  for (const pid of ip(['netns', 'pids', ns], true).split(/\s+/).filter(Boolean).map(Number)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  ip(['netns', 'del', ns], true);
  rmSync(path.join('/etc/netns', ns), { recursive: true, force: true });
  live.delete(ns);
}

/** Namespaces a crashed earlier run left behind (its pid in the name is gone). */
function sweepStale(prefix: string): void {
  for (const line of ip(['netns', 'list'], true).split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const m = new RegExp(`^${prefix}-(\\d+)-[ab]$`).exec(name);
    if (m && !isPidAlive(Number(m[1]))) destroyNamespace(name);
  }
}

/**
 * Makes hosts A (`<subnet>.1`) and B (`<subnet>.2`) on a /24, e.g. subnet '10.77.41'. Each namespace gets its
 * own /etc/hosts (localhost only), which `ip netns exec` mounts over the real one: neither host name resolves.
 */
export function createHostPair(prefix: string, subnet: string): HostPair {
  sweepStale(prefix);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => [...live].forEach(destroyNamespace));
  }
  const tag = `${prefix}-${process.pid}`;
  const mk = (side: 'a' | 'b', n: number): NetnsHost => ({
    ns: `${tag}-${side}`,
    ifname: `gs${process.pid % 100000}${side}`,
    addr: `${subnet}.${n}`,
    hostname: `host-${side}`,
  });
  const a = mk('a', 1);
  const b = mk('b', 2);
  const remove = (): void => [a.ns, b.ns].forEach(destroyNamespace);
  try {
    for (const h of [a, b]) {
      ip(['netns', 'add', h.ns]);
      live.add(h.ns);
      mkdirSync(path.join('/etc/netns', h.ns), { recursive: true });
      writeFileSync(path.join('/etc/netns', h.ns, 'hosts'), '127.0.0.1 localhost\n::1 localhost\n');
    }
    // Created in the root namespace, then moved: if a move fails, remove() cannot see the link, so drop it here.
    ip(['link', 'add', a.ifname, 'type', 'veth', 'peer', 'name', b.ifname]);
    try {
      for (const h of [a, b]) ip(['link', 'set', h.ifname, 'netns', h.ns]);
    } catch (e) {
      ip(['link', 'del', a.ifname], true);
      throw e;
    }
    for (const h of [a, b]) {
      ip(['-n', h.ns, 'addr', 'add', `${h.addr}/24`, 'dev', h.ifname]);
      ip(['-n', h.ns, 'link', 'set', 'lo', 'up']);
      ip(['-n', h.ns, 'link', 'set', h.ifname, 'up']);
    }
  } catch (e) {
    remove();
    throw e;
  }
  return { a, b, remove };
}

/** Argv that runs `argv` on `host`: inside its namespace, under its own unresolvable host name. */
export function onHost(host: NetnsHost, argv: string[]): string[] {
  return ['ip', 'netns', 'exec', host.ns, 'unshare', '--uts', 'sh', '-c', 'hostname "$0" && exec "$@"', host.hostname, ...argv];
}

/** os.networkInterfaces() as seen from inside the host's namespace (Node run there). */
export function hostInterfaces(host: NetnsHost): InterfaceTable {
  const r = spawnSync('ip', ['netns', 'exec', host.ns, process.execPath, '-e', 'process.stdout.write(JSON.stringify(require("os").networkInterfaces()))'], {
    encoding: 'utf8',
    timeout: 15_000,
  });
  if (r.status !== 0) throw new Error(`reading interfaces in ${host.ns} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as InterfaceTable;
}
