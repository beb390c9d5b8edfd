/**
 * The rogue advert of issue 14 (item 1), on namespace hosts with the built app: A runs the genuine
 * `gpu-share serve --coordinator-host 0.0.0.0 --cluster-name lab`; R runs a rogue that copies A's advert (same
 * instance name, same public cluster tag) and repeats it every 50 ms with its own address and its own certificate's
 * fingerprint, serving HTTPS that records every request; W runs `GPU_SHARE_JOIN_TOKEN=… gpu-share worker --discover
 * --cluster-name lab`. The worker must ignore the rogue, saying so, send it nothing it can use — not the token, not
 * the node name, not the machine id, no join — and join A.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { bundleEntry } from '../integration/helpers/agent-bundle';
import { loadOrCreateTlsIdentity } from '../../src-main/platform/tls-identity';
import { productEnv } from './helpers/app';
import { appBuild } from './helpers/app-snapshot';
import { canRunApp, required } from './helpers/can-make-hosts';
import { HOST_DEV } from './helpers/hosts';
import type { HostProcess } from './helpers/host-process';
import { repoRoot } from './helpers/paths';
import { sh } from './helpers/sh';
import { startApp, stopTestbed, waitForActive, type Testbed } from './helpers/testbed';

const READY = /^worker ready: id=(\d+) node=(\S+)/;
const ROGUE_PORT = 7421;

describe.skipIf(!required(canRunApp(), 'the rogue advert case'))('a rogue advert on the LAN', () => {
  let tb: Testbed | null = null;
  let rogue: HostProcess | null = null;
  let worker: HostProcess | null = null;
  const dir = mkdtempSync(path.join(tmpdir(), 'gsmh-rogue-'));
  const rogueLog = path.join(dir, 'rogue-requests.jsonl');
  const workerDir = path.join(dir, 'worker-data');

  beforeAll(async () => {
    tb = await startApp({ hosts: ['a', 'r', 'w'], app: { extraArgs: ['--cluster-name', 'lab'], localWorker: false, autoApprove: true } });
    // A namespace has no default route; mDNS needs one for 224.0.0.251, as any real LAN has.
    for (const host of tb.cluster.hosts) sh('ip', ['-n', host.ns, 'route', 'add', '224.0.0.0/4', 'dev', HOST_DEV]);
    await tb.app.proc.waitForLine(/^Advertised on the LAN/, 10_000);

    const identity = await loadOrCreateTlsIdentity(path.join(dir, 'rogue-tls'));
    writeFileSync(path.join(dir, 'cert.pem'), identity.certPem);
    writeFileSync(path.join(dir, 'key.pem'), identity.keyPem, { mode: 0o600 });
    writeFileSync(rogueLog, '');
    const entry = await bundleEntry('test/multihost/fixtures/rogue-coordinator.ts', 'rogue-coordinator', repoRoot);
    const r = tb.cluster.host('r');
    rogue = r.spawn([process.execPath, entry, path.join(dir, 'cert.pem'), path.join(dir, 'key.pem'), rogueLog, String(ROGUE_PORT), r.address, identity.fingerprint256], { label: 'r:rogue' });
    tb.tracker.addRoot(rogue.pid);
    await rogue.waitForLine(/^rogue: copying /, 20_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${rogue!.tail(20)}`);
    });
  }, 120_000);

  afterAll(async () => {
    await worker?.stop(10_000);
    await rogue?.stop(5_000);
    if (tb) {
      const left = await stopTestbed(tb);
      expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('the worker ignores the rogue, sends it nothing it can use, and joins the genuine coordinator', async () => {
    const w = tb!.cluster.host('w');
    const r = tb!.cluster.host('r');
    const token = tb!.app.join.token;
    const argv = [process.execPath, (await appBuild()).cli, 'worker', '--discover', '--cluster-name', 'lab', '--data-dir', workerDir];
    worker = w.spawn(argv, { env: await productEnv({ GPU_SHARE_JOIN_TOKEN: token }), cwd: repoRoot, label: 'w:worker-discover' });
    tb!.tracker.addRoot(worker.pid);
    await worker.waitForLine(READY, 60_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${worker!.tail(30)}\nrogue:\n${rogue!.tail(10)}`);
    });
    const state = await waitForActive(tb!, [w.hostname], false, 30_000);
    expect(state.workers.filter((x) => x.node === w.hostname)).toHaveLength(1);

    const said = worker.lines.map((l) => l.text).join('\n');
    expect(said).toContain(`heard `);
    expect(said).toContain(`at https://${r.address}:${ROGUE_PORT}: could not prove it holds your cluster's join token — ignored`);
    expect(said).toMatch(new RegExp(`^found .* at https://${tb!.cluster.host('a').address.replace(/\./g, '\\.')}:`, 'm'));
    expect(said).not.toMatch(new RegExp(`^found .* at https://${r.address.replace(/\./g, '\\.')}:`, 'm'));

    // What the rogue received: the challenge only (so the test did reach it), and nothing the attack needs.
    const received = readFileSync(rogueLog, 'utf8');
    const requests = received
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { method?: string; url?: string });
    expect(requests.filter((q) => q.url === '/v1/join/challenge').length).toBeGreaterThan(0);
    expect(requests.filter((q) => q.url !== undefined && q.url !== '/v1/join/challenge')).toEqual([]);
    expect(received).not.toContain(token);
    expect(received).not.toContain(w.hostname);
    const machineIdFile = path.join(workerDir, 'machine-id');
    expect(existsSync(machineIdFile)).toBe(true);
    const machineId = readFileSync(machineIdFile, 'utf8').trim();
    expect(machineId.length).toBeGreaterThan(10);
    expect(received).not.toContain(machineId);
    expect(received).not.toMatch(/authorization/i);
  }, 120_000);
});
