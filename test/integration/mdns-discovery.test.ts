/**
 * LAN discovery over real mDNS, only between two network namespaces (never on this machine's interfaces):
 * host A advertises coordinators, host B browses. Named clusters stay apart, a browser without a name sees only
 * untagged coordinators, the wire carries the tag and never the name, and a stopped coordinator
 * is found no more.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiscoveredCoordinator } from '../../src-shared/nodes/ipc-discovery';
import { clusterTag } from '../../src-main/platform/discovery/discovery-record';
import { bundleEntry } from './helpers/agent-bundle';
import { createHostPair, netnsUnavailableReason, onHost, type HostPair, type NetnsHost } from './helpers/netns-pair';

const skip = netnsUnavailableReason();
const CERT_A = 'a1'.repeat(32);
const CERT_B = 'b2'.repeat(32);

describe.skipIf(skip !== null)('mDNS discovery between namespace hosts', () => {
  let pair: HostPair;
  let child: string;
  const advertisers: ChildProcess[] = [];

  /** Runs the child on a host to completion and returns its JSON line. */
  const runOn = <T>(host: NetnsHost, args: string[]): T => {
    const [cmd, ...rest] = onHost(host, [process.execPath, child, ...args]);
    const r = spawnSync(cmd!, rest, { encoding: 'utf8', timeout: 20_000 });
    if (r.status !== 0) throw new Error(`child ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as T;
  };

  const advertise = async (args: string[]): Promise<ChildProcess> => {
    const [cmd, ...rest] = onHost(pair.a, [process.execPath, child, 'advertise', ...args]);
    const proc = spawn(cmd!, rest, { stdio: ['ignore', 'pipe', 'inherit'] });
    advertisers.push(proc);
    await new Promise<void>((resolve, reject) => {
      proc.stdout!.on('data', (d: Buffer) => d.toString().includes('advertising') && resolve());
      proc.once('exit', (code) => reject(new Error(`advertiser exited ${code}`)));
    });
    return proc;
  };

  beforeAll(async () => {
    pair = createHostPair('gsmdns', `10.78.${process.pid % 200}`);
    // No default route in a namespace: mDNS needs a route for 224.0.0.251 (a real LAN has one).
    for (const h of [pair.a, pair.b]) spawnSync('ip', ['-n', h.ns, 'route', 'add', '224.0.0.0/4', 'dev', h.ifname]);
    child = await bundleEntry('test/integration/mdns-discovery-child.ts', 'mdns-discovery-child');
    await advertise(['7421', CERT_A]);
    await advertise(['7422', CERT_B, 'lab']);
  }, 60_000);

  afterAll(async () => {
    for (const p of advertisers) if (p.exitCode === null) p.kill('SIGKILL');
    pair?.remove();
  });

  it('a browser without a cluster name finds only the untagged coordinator, at the address it answered from', () => {
    const found = runOn<DiscoveredCoordinator[]>(pair.b, ['browse', '2500']);
    expect(found).toEqual([expect.objectContaining({ name: 'host-a', url: `https://${pair.a.addr}:7421`, certSha256: CERT_A })]);
    expect(found[0]!.clusterName).toBeUndefined();
  });

  it('a browser with the cluster name finds only that cluster; another name finds nothing', () => {
    expect(runOn<DiscoveredCoordinator[]>(pair.b, ['browse', '2500', 'lab'])).toEqual([
      expect.objectContaining({ url: `https://${pair.a.addr}:7422`, certSha256: CERT_B, clusterName: 'lab' }),
    ]);
    expect(runOn<DiscoveredCoordinator[]>(pair.b, ['browse', '2500', 'home'])).toEqual([]);
  });

  it('the wire carries the tag, never the cluster name', () => {
    const raw = runOn<Record<string, string>[]>(pair.b, ['raw', '2500']);
    expect(raw).toHaveLength(2);
    expect(raw.map((t) => t.cluster).sort()).toEqual([clusterTag('lab'), undefined].sort());
    expect(JSON.stringify(raw)).not.toContain('lab');
  });

  it('a stopped coordinator is found no more', async () => {
    const proc = await advertise(['7423', CERT_A, 'gone']);
    expect(runOn<DiscoveredCoordinator[]>(pair.b, ['browse', '2000', 'gone'])).toHaveLength(1);
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
    expect(runOn<DiscoveredCoordinator[]>(pair.b, ['browse', '2000', 'gone'])).toEqual([]);
  });
});

if (skip) describe('mDNS discovery between namespace hosts', () => it.skip(`skipped: ${skip}`, () => undefined));
