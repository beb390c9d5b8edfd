/**
 * LAN discovery across hosts with the built app: `gpu-share serve --cluster-name lab` on A and another serve with
 * `--cluster-name other` on B both advertise over mDNS. `gpu-share worker --discover --cluster-name lab` on C finds
 * A among the two, joins it with only the token (no URL, no fingerprint typed) and is active there, never on B;
 * a worker with no cluster name on D hears nothing it may join and exits 1 saying what to check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { App, productEnv } from './helpers/app';
import { appBuild } from './helpers/app-snapshot';
import { canRunApp, required } from './helpers/can-make-hosts';
import { HOST_DEV, type Host } from './helpers/hosts';
import type { HostProcess } from './helpers/host-process';
import { repoRoot } from './helpers/paths';
import { sh } from './helpers/sh';
import { startApp, stopTestbed, waitForActive, type Testbed } from './helpers/testbed';

const READY = /^worker ready: id=(\d+) node=(\S+)/;

describe.skipIf(!required(canRunApp(), 'the multihost discovery cases'))('coordinators found on the LAN by cluster name', () => {
  let tb: Testbed | null = null;
  let other: App | null = null;
  const discovering: HostProcess[] = [];

  /** `gpu-share worker --discover` on a host, with A's join token (the only thing a person types). */
  const discover = async (host: Host, clusterName?: string): Promise<HostProcess> => {
    const argv = [process.execPath, (await appBuild()).cli, 'worker', '--discover', ...(clusterName ? ['--cluster-name', clusterName] : []), '--data-dir', `/tmp/gsmh-discover-${host.name}-${process.pid}`];
    const proc = host.spawn(argv, { env: await productEnv({ GPU_SHARE_JOIN_TOKEN: tb!.app.join.token }), cwd: repoRoot, label: `${host.name}:worker-discover` });
    tb!.tracker.addRoot(proc.pid);
    discovering.push(proc);
    return proc;
  };

  beforeAll(async () => {
    tb = await startApp({ hosts: ['a', 'b', 'c', 'd'], app: { extraArgs: ['--cluster-name', 'lab'], localWorker: false, autoApprove: true } });
    // A namespace has no default route; mDNS needs one for 224.0.0.251, as any real LAN has.
    for (const host of tb.cluster.hosts) sh('ip', ['-n', host.ns, 'route', 'add', '224.0.0.0/4', 'dev', HOST_DEV]);
    other = await App.start(tb.cluster.host('b'), { extraArgs: ['--cluster-name', 'other'], localWorker: false });
    tb.tracker.addRoot(other.proc.pid);
    await tb.app.proc.waitForLine(/^Advertised on the LAN/, 10_000);
  });

  afterAll(async () => {
    for (const proc of discovering) await proc.stop(10_000);
    await other?.close(15_000);
    if (!tb) return;
    const left = await stopTestbed(tb);
    sh('rm', ['-rf', ...['c', 'd'].map((h) => `/tmp/gsmh-discover-${h}-${process.pid}`)]);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it("a worker with --cluster-name lab joins A's coordinator and never B's", async () => {
    const worker = await discover(tb!.cluster.host('c'), 'lab');
    await worker.waitForLine(READY, 60_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${worker.tail(20)}`);
    });
    const state = await waitForActive(tb!, ['host-c'], false, 30_000);
    expect(state.workers.filter((w) => w.node === 'host-c')).toHaveLength(1);
    const onB = await other!.state();
    expect(onB.workers.map((w) => w.node)).not.toContain('host-c');
  });

  it('a worker with no cluster name hears nothing untagged and exits 1 saying what to check', async () => {
    const worker = await discover(tb!.cluster.host('d'));
    const exit = await Promise.race([worker.exited, new Promise<null>((r) => setTimeout(() => r(null), 30_000))]);
    expect(exit?.code, worker.tail(10)).toBe(1);
    const said = worker.lines.map((l) => l.text).join('\n');
    expect(said).toContain('no GPU Share coordinator without a cluster name answered on this network');
    expect(said).toContain('--cluster-name');
    expect((await tb!.app.state()).workers.map((w) => w.node)).not.toContain('host-d');
    expect((await other!.state()).workers.map((w) => w.node)).not.toContain('host-d');
  });
});
