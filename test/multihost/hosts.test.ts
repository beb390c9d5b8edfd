/**
 * The harness itself, proven before any case relies on it: hosts reach each other by address but cannot
 * resolve each other's names, each has its own hostname and sees none of the machine's interfaces, a cut
 * link really cuts and comes back, the bandwidth cap really caps, the fault proxy and the API relay work
 * inside hosts, and no namespace, link or process is left — after a normal teardown, after SIGTERM, after a
 * crash, and after a SIGKILL (the next run sweeps it).
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry } from '../integration/helpers/agent-bundle';
import { TORCH_PYTHON } from '../integration/helpers/agent-handle';
import { waitFor } from '../integration/helpers/wait';
import { canMakeHosts, required } from './helpers/can-make-hosts';
import { Cluster, type Host } from './helpers/hosts';
import type { HostProcess } from './helpers/host-process';
import { listNamespaces, NS_PREFIX, sweepLeftovers } from './helpers/namespace-registry';
import { releaseProxyBundle, startProxy } from './helpers/proxy-process';
import { ip } from './helpers/sh';

/** A TCP server on the host: echoes what it gets; "sink" mode counts bytes and prints the time they took. */
const SERVER = `
const net = require('net');
const [host, port, mode] = process.argv.slice(1);
net.createServer((s) => {
  if (mode === 'sink') {
    let n = 0, t0 = 0;
    s.on('data', (d) => { if (!t0) t0 = Date.now(); n += d.length; });
    s.on('end', () => { console.log('sink ' + n + ' bytes in ' + (Date.now() - t0) + ' ms'); s.end(); });
  } else s.pipe(s);
}).listen(Number(port), host, () => console.log('listening'));
`;
/** Connects, sends argv[3] bytes (or 'ping'), prints what came back; exit 1 on any error or after 3 s. */
const CLIENT = `
const net = require('net');
const [host, port, bytes] = process.argv.slice(1);
setTimeout(() => { console.log('timeout'); process.exit(1); }, 3000);
const s = net.connect(Number(port), host, () => s.end(bytes ? Buffer.alloc(Number(bytes)) : 'ping'));
let got = '';
s.on('data', (d) => got += d);
s.on('end', () => { console.log('got ' + got.slice(0, 100)); process.exit(0); });
s.on('error', (e) => { console.log('error ' + e.code); process.exit(1); });
`;

function rootLinks(): string {
  return ip('-o', 'link', 'show')
    .split('\n')
    .map((l) => l.split(':')[1]?.trim())
    .filter(Boolean)
    .sort()
    .join(' ');
}

function connect(from: Host, to: Host, port: number): { code: number; out: string } {
  return from.run([process.execPath, '-e', CLIENT, to.address, String(port)]);
}

describe.skipIf(!required(canMakeHosts(), 'the multihost harness tests'))('namespace hosts', () => {
  let cluster: Cluster;
  let nsBefore: string[];
  let linksBefore: string;

  beforeAll(async () => {
    sweepLeftovers();
    nsBefore = listNamespaces().sort();
    linksBefore = rootLinks();
    cluster = Cluster.create(['a', 'b', 'c']);
    for (const h of cluster.hosts) {
      const server = h.spawn([process.execPath, '-e', SERVER, h.address, '9000'], { label: `${h.name}:echo` });
      await server.waitForLine(/^listening$/, 10_000);
    }
  });

  afterAll(async () => {
    await cluster?.destroy(2_000);
    await releaseProxyBundle();
  });

  it('each host has its own address, hostname and only its own links', () => {
    expect(new Set(cluster.hosts.map((h) => h.address)).size).toBe(3);
    for (const h of cluster.hosts) {
      expect(h.address).toMatch(/^10\.213\.\d+\.\d+$/);
      expect(h.run(['hostname']).out.trim()).toBe(h.hostname);
      const links = h.run(['ip', '-o', 'link', 'show']).out;
      expect(links).toMatch(/ lo: /);
      expect(links).toMatch(/ lan0@/);
      expect(links, 'the machine\'s own interfaces are not on the host').not.toMatch(/ eth0[:@]/);
    }
  });

  it('hosts reach each other by address', () => {
    const [a, b, c] = cluster.hosts as [Host, Host, Host];
    for (const [from, to] of [[a, b], [b, c], [c, a], [a, a]] as const) {
      const r = connect(from, to, 9000);
      expect(r, `${from.name} → ${to.name}`).toEqual({ code: 0, out: 'got ping\n' });
    }
  });

  it("hosts cannot resolve each other's names (no DNS, as on a home LAN), and torch sees its own hostname", () => {
    const [a] = cluster.hosts as [Host];
    for (const other of ['host-b', 'host-c']) {
      expect(a.run(['getent', 'hosts', other]).code, `getent hosts ${other} on a`).not.toBe(0);
      const py = a.run([TORCH_PYTHON, '-c', `import socket; socket.gethostbyname(${JSON.stringify(other)})`]);
      expect(py.code, `python resolving ${other} on a`).not.toBe(0);
    }
    // What torch 1.13 hands ranks as MASTER_ADDR on this host: a name the others cannot resolve.
    expect(a.run([TORCH_PYTHON, '-c', 'import socket; print(socket.getfqdn())']).out.trim()).toBe('host-a');
  });

  it('a cut link cuts the host off, and it comes back when the link returns', () => {
    const [a, b] = cluster.hosts as [Host, Host];
    b.linkDown();
    try {
      expect(connect(a, b, 9000).code, 'a → b with b cut off').not.toBe(0);
      expect(connect(b, a, 9000).code, 'b → a with b cut off').not.toBe(0);
    } finally {
      b.linkUp();
    }
    expect(connect(a, b, 9000)).toEqual({ code: 0, out: 'got ping\n' });
  });

  it('a bandwidth cap slows transfers in both directions', async () => {
    const [a, b, c] = cluster.hosts as [Host, Host, Host];
    const sinks = new Map<Host, HostProcess>();
    for (const h of [a, b]) {
      const sink = h.spawn([process.execPath, '-e', SERVER, h.address, '9001', 'sink'], { label: `${h.name}:sink` });
      await sink.waitForLine(/^listening$/, 10_000);
      sinks.set(h, sink);
    }
    const took = async (from: Host, to: Host) => {
      const sink = sinks.get(to)!;
      const start = sink.lines.length;
      expect(from.run([process.execPath, '-e', CLIENT, to.address, '9001', String(500_000)]).code).toBe(0);
      return Number((await sink.waitForLine(/^sink 500000 bytes in (\d+) ms$/, 5_000, start))[1]);
    };
    const fast = await took(c, a);
    b.limitBandwidth('4mbit');
    expect(b.qdiscs()).toMatch(/tbf .*rate 4Mbit[\s\S]*tbf .*rate 4Mbit/);
    // 500 kB at 4 Mbit/s: about 1 s, out of b (its end of the cable) and into b (the switch's end).
    const upload = await took(b, a);
    const download = await took(c, b);
    expect(fast, 'uncapped').toBeLessThan(400);
    expect(upload, 'from b, capped at 4 Mbit/s').toBeGreaterThan(700);
    expect(download, 'to b, capped at 4 Mbit/s').toBeGreaterThan(700);
  });

  it('the fault proxy runs inside a host and forwards between hosts; the API relay reaches a host from a Unix socket', async () => {
    const [a, b, c] = cluster.hosts as [Host, Host, Host];
    const proxy = await startProxy(b, `${b.address}:7431`, `${a.address}:9000`, { maxDelayMs: 50, seed: 7 });
    expect(connect(c, b, 7431)).toEqual({ code: 0, out: 'got ping\n' });
    // Nothing listens on the machine's own interfaces: the proxy's port is only in b.
    expect(connect(a, a, 7431).code).not.toBe(0);

    const socketPath = path.join(tmpdir(), `${NS_PREFIX}-${process.pid}-relay.sock`);
    const relay = await startProxy(a, `unix:${socketPath}`, '127.0.0.1:9002');
    const local = a.spawn([process.execPath, '-e', SERVER, '127.0.0.1', '9002'], { label: 'a:loopback-echo' });
    await local.waitForLine(/^listening$/, 10_000);
    const echoed = await new Promise<string>((resolve, reject) => {
      const s = net.connect(socketPath, () => s.end('through the relay'));
      let got = '';
      s.on('data', (d) => (got += d));
      s.on('end', () => resolve(got));
      s.on('error', reject);
    });
    expect(echoed).toBe('through the relay');
    await relay.proc.stop(2_000);
    await proxy.proc.stop(2_000);
    expect(proxy.proc.findLine(/^fault-proxy stats /)).not.toBeNull();
    rmSync(socketPath, { force: true });
  });

  it('destroy leaves no namespace and no link of ours, with no process left', async () => {
    const pids = cluster.hosts.flatMap((h) => h.spawned().map((p) => p.pid));
    await cluster.destroy(2_000);
    // Other suites may make namespaces of their own meanwhile: only ours are compared.
    const ours = (list: string[]) => list.filter((n) => n.startsWith(`${NS_PREFIX}${process.pid}-`));
    expect(ours(listNamespaces())).toEqual([]);
    expect(ours(nsBefore)).toEqual([]);
    expect(rootLinks()).toBe(linksBefore);
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
  });
});

describe.skipIf(!required(canMakeHosts(), 'the multihost cleanup tests'))('cleanup when the process dies', () => {
  let fixture: string;
  beforeAll(async () => {
    fixture = await bundleEntry('test/multihost/fixtures/die-holding-namespace.ts', 'die-holding-namespace');
  });
  afterAll(() => rmSync(fixture, { force: true }));

  /** Runs the fixture; returns the namespace it made and whether it is still there after the fixture ended. */
  async function runFixture(how: string, killWith?: NodeJS.Signals): Promise<{ ns: string; left: boolean; pid: number }> {
    const child = spawn(process.execPath, [fixture, how], { stdio: ['ignore', 'pipe', 'pipe'] });
    const ns = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        const m = /made (\S+)/.exec(d);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`fixture exited (${code}) before making a namespace`)));
    });
    if (killWith) child.kill(killWith);
    await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));
    return { ns, left: listNamespaces().includes(ns), pid: child.pid! };
  }

  it.each([['SIGTERM'], ['throw']])('removes its namespaces when it ends by %s', async (how) => {
    const r = await runFixture(how);
    expect(r.left, `${r.ns} still exists`).toBe(false);
  });

  it('removes them on SIGINT from outside', async () => {
    const r = await runFixture('wait', 'SIGINT');
    expect(r.left, `${r.ns} still exists`).toBe(false);
  });

  it('after a SIGKILL (no hook can run) the next run sweeps the leftover, processes inside included', async () => {
    const r = await runFixture('wait', 'SIGKILL');
    expect(r.left, 'SIGKILL leaves the namespace behind').toBe(true);
    const inside = spawn('nsenter', [`--net=/run/netns/${r.ns}`, '--', 'sleep', '300'], { stdio: 'ignore' });
    await waitFor('sleep to run inside the namespace', () => ip('netns', 'pids', r.ns).split(/\s+/).includes(String(inside.pid)), { timeoutMs: 5_000 });
    expect(sweepLeftovers()).toContain(r.ns);
    expect(listNamespaces()).not.toContain(r.ns);
    await new Promise((resolve) => (inside.exitCode !== null || inside.signalCode !== null ? resolve(null) : inside.once('exit', resolve)));
    expect(inside.signalCode).toBe('SIGKILL');
  });
});
