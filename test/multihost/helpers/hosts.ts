/**
 * Real hosts on one machine: one network namespace per host, all plugged into a bridge that lives in a
 * namespace of its own (a switch), each with an address in a 10.213.k.0/24 LAN the test owns, loopback up,
 * and its own hostname that no other host can resolve (no DNS: like a home LAN). Loopback on one machine
 * hides the bugs that matter (a rendezvous on 127.0.0.1, a hostname that does not resolve, a cut link);
 * these hosts do not.
 *
 *   const cluster = Cluster.create(['a', 'b', 'c']);
 *   const p = cluster.host('b').spawn(['node', 'x.js'], { env });
 *   cluster.host('b').linkDown();
 *   await cluster.destroy();
 */
import { execFileSync } from 'node:child_process';
import { HostProcess } from './host-process';
import { namespaceName, removeNamespace, sweepLeftovers, track } from './namespace-registry';
import { ip, sh } from './sh';

/** The host's interface, inside its namespace. Every namespace has its own link names, so this never collides. */
export const HOST_DEV = 'lan0';
const BRIDGE = 'br0';
const NAME = /^[a-z][a-z0-9]{0,7}$/;

let clustersMade = 0;

export interface HostSpawnOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** How the process is named in failure messages (default: "<host> <argv0>"). */
  label?: string;
}

export class Host {
  private readonly processes: HostProcess[] = [];

  constructor(
    readonly name: string,
    /** The network namespace (a name under /run/netns). */
    readonly ns: string,
    readonly hostname: string,
    readonly address: string,
    private readonly bridgeNs: string,
  ) {}

  /** The bridge-side end of this host's cable. */
  get switchPort(): string {
    return `p-${this.name}`;
  }

  /**
   * The argv that runs `argv` on this host. nsenter rather than `ip netns exec`, because ip forks and waits
   * while nsenter (without --fork) and unshare exec in place: the pid we get is the command's own, so a
   * signal reaches it, not a launcher in between. unshare --uts gives the host its own hostname.
   */
  wrap(argv: string[]): string[] {
    return ['nsenter', `--net=/run/netns/${this.ns}`, '--', 'unshare', '--uts', '--', 'sh', '-c', `hostname ${this.hostname} && exec "$@"`, 'sh', ...argv];
  }

  /** Starts `argv` on this host; the cluster stops it in destroy(). */
  spawn(argv: string[], opts: HostSpawnOptions = {}): HostProcess {
    const [cmd, ...args] = this.wrap(argv);
    const label = opts.label ?? `${this.name}:${argv[0]?.split('/').pop()}`;
    const proc = new HostProcess(label, cmd!, args, { env: opts.env, cwd: opts.cwd });
    this.processes.push(proc);
    return proc;
  }

  /** Runs a short command on this host and returns its status and output (for checks such as ping). */
  run(argv: string[], timeoutMs = 10_000): { code: number; out: string } {
    const [cmd, ...args] = this.wrap(argv);
    try {
      return { code: 0, out: execFileSync(cmd!, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs }) };
    } catch (error) {
      const e = error as { status?: number; stdout?: string; stderr?: string };
      return { code: e.status ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  }

  /**
   * Gives this host more addresses of its LAN on its one interface (a machine may hold many; a stranger uses
   * them to spread its sockets). They go with the namespace.
   */
  addAddresses(addresses: string[]): void {
    for (const a of addresses) ip('-n', this.ns, 'addr', 'add', `${a}/24`, 'dev', HOST_DEV);
  }

  /** Pulls this host's cable at the switch: the host's link loses carrier, the others hear silence from it. */
  linkDown(): void {
    ip('-n', this.bridgeNs, 'link', 'set', this.switchPort, 'down');
  }

  linkUp(): void {
    ip('-n', this.bridgeNs, 'link', 'set', this.switchPort, 'up');
  }

  /**
   * Caps the host's link to `rate` (tc syntax, e.g. "20mbit") in both directions: tbf shapes only what leaves a
   * device, so it goes on the host's end (upload) and on the switch's end (download). netem is not in this kernel.
   */
  limitBandwidth(rate: string): void {
    const tbf = ['root', 'tbf', 'rate', rate, 'burst', '32kbit', 'latency', '50ms'];
    sh('tc', ['-n', this.ns, 'qdisc', 'replace', 'dev', HOST_DEV, ...tbf]);
    sh('tc', ['-n', this.bridgeNs, 'qdisc', 'replace', 'dev', this.switchPort, ...tbf]);
  }

  /** The qdisc lines of both ends, for checks. */
  qdiscs(): string {
    return sh('tc', ['-n', this.ns, 'qdisc', 'show', 'dev', HOST_DEV]) + sh('tc', ['-n', this.bridgeNs, 'qdisc', 'show', 'dev', this.switchPort]);
  }

  /** Every process spawned here, for the cluster's cleanup. */
  spawned(): readonly HostProcess[] {
    return this.processes;
  }
}

export class Cluster {
  private constructor(
    readonly hosts: Host[],
    readonly bridgeNs: string,
    /** The LAN, e.g. "10.213.57" (hosts are .1, .2, … in the order given). */
    readonly subnet: string,
  ) {}

  /** Builds the hosts (fast: a few dozen `ip` calls). Sweeps what a killed earlier run left first. */
  static create(names: string[]): Cluster {
    for (const n of names) if (!NAME.test(n)) throw new Error(`host name "${n}" must be a lowercase letter then up to 7 letters or digits`);
    if (new Set(names).size !== names.length) throw new Error(`host names must be unique: ${names.join(', ')}`);
    const swept = sweepLeftovers();
    if (swept.length > 0) console.info(`multihost: removed namespaces left by earlier runs: ${swept.join(', ')}`);
    const run = ++clustersMade;
    // An unusual subnet, different per run: nothing here should ever look like a real LAN address.
    const subnet = `10.213.${16 + ((process.pid + run) % 200)}`;
    const bridgeNs = namespaceName(`${run}-switch`);
    const made: string[] = [];
    try {
      track(bridgeNs);
      made.push(bridgeNs);
      ip('netns', 'add', bridgeNs);
      ip('-n', bridgeNs, 'link', 'set', 'lo', 'up');
      ip('-n', bridgeNs, 'link', 'add', BRIDGE, 'type', 'bridge');
      ip('-n', bridgeNs, 'link', 'set', BRIDGE, 'up');
      const hosts = names.map((name, i) => {
        const ns = namespaceName(`${run}-${name}`);
        track(ns);
        made.push(ns);
        const host = new Host(name, ns, `host-${name}`, `${subnet}.${i + 1}`, bridgeNs);
        ip('netns', 'add', ns);
        ip('-n', ns, 'link', 'set', 'lo', 'up');
        // Created inside the namespaces (never in the machine's own), so a crash here leaves no stray link.
        ip('-n', ns, 'link', 'add', HOST_DEV, 'type', 'veth', 'peer', 'name', host.switchPort, 'netns', bridgeNs);
        ip('-n', bridgeNs, 'link', 'set', host.switchPort, 'master', BRIDGE);
        ip('-n', bridgeNs, 'link', 'set', host.switchPort, 'up');
        ip('-n', ns, 'addr', 'add', `${host.address}/24`, 'dev', HOST_DEV);
        ip('-n', ns, 'link', 'set', HOST_DEV, 'up');
        return host;
      });
      return new Cluster(hosts, bridgeNs, subnet);
    } catch (error) {
      for (const ns of made) removeNamespace(ns);
      throw error;
    }
  }

  host(name: string): Host {
    const h = this.hosts.find((x) => x.name === name);
    if (!h) throw new Error(`no host "${name}" in this cluster (${this.hosts.map((x) => x.name).join(', ')})`);
    return h;
  }

  /** Namespaces of this cluster (hosts and switch). */
  namespaces(): string[] {
    return [this.bridgeNs, ...this.hosts.map((h) => h.ns)];
  }

  /**
   * Stops every process spawned on the hosts (SIGTERM, SIGKILL after `graceMs`), then removes the namespaces,
   * which SIGKILLs anything still inside and removes every link. Safe to call twice.
   */
  async destroy(graceMs = 10_000): Promise<void> {
    await Promise.all(this.hosts.flatMap((h) => h.spawned().map((p) => p.stop(graceMs))));
    for (const ns of this.namespaces()) removeNamespace(ns);
  }
}
