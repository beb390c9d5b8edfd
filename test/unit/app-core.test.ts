// The app core with real services (store on disk, detection through the fake nvidia-smi, coordinator on
// 127.0.0.1): what the UI's requests do to the cluster, and that bad input never replaces good state.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseClusterYaml } from '../../src-shared/cluster/index';
import type { EventMethod } from '../../src-shared/ipc';
import type { UserNotification } from '../../src-shared/training';
import { createAppCore } from '../../src-main/app/app-core';
import { runSpecSchema } from '../../src-shared/worker-protocol';
import type { AppCore } from '../../src-main/app/app-core-types';
import { dispatchRequest } from '../../src-main/app/ipc-dispatch';
import { nodePtySpawner } from '../../src-main/platform/pty/node-pty-spawner';

const fixtures = path.resolve(__dirname, '..', 'fixtures');
const sample = readFileSync(path.join(fixtures, 'cluster', 'sample.yaml'), 'utf8');

function fakeGpuEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GPU_SHARE_NVIDIA_SMI: path.join(fixtures, 'bin', 'nvidia-smi'),
    FAKE_NVIDIA_SMI_QUERY_GPU: path.join(fixtures, 'nvidia-smi', 'query-gpu-csv-header-units-consumer-x3.txt'),
  };
}

describe('app core', () => {
  let dir: string;
  let core: AppCore;
  const seen: { event: EventMethod; payload: unknown }[] = [];
  const notified: UserNotification[] = [];

  /** The core with real services, no local worker and no polling; `clusterPath` overrides the default file. */
  const startCore = (clusterPath?: string): Promise<AppCore> =>
    createAppCore({
      userData: dir,
      ...(clusterPath ? { clusterPath } : {}),
      notifier: { notify: (n) => notified.push(n) },
      pty: nodePtySpawner,
      coordinatorPort: 0,
      localWorker: false,
      hardwarePollMs: 0,
      env: fakeGpuEnv(),
    });

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-core-'));
    seen.length = 0;
    notified.length = 0;
    core = await startCore();
    core.subscribe((event, payload) => seen.push({ event, payload }));
  });

  afterEach(async () => {
    await core.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records where its coordinator listens (coordinator.json, 0600) for the CLI, keeps state.db, and removes the record on stop', async () => {
    const file = path.join(dir, 'coordinator.json');
    const record = JSON.parse(readFileSync(file, 'utf8')) as { url: string; pid: number; certSha256: string | null };
    expect(record.url).toBe(core.coordinatorUrl.replace(/\/$/, ''));
    expect(record).toMatchObject({ pid: process.pid, certSha256: null });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const run = await core.handlers.startRun(runSpecSchema.parse({ name: 'kept', command: ['train.py'], samples: 10 }));
    await core.stop();
    expect(existsSync(file)).toBe(false);
    // A restarted app knows the run (waiting: nobody trains it) and its events.
    core = await startCore();
    const runs = await core.handlers.getRuns(undefined);
    expect(runs.map((r) => [r.id, r.state])).toEqual([[run.id, 'waiting']]);
    expect((await core.handlers.getEvents(undefined)).some((e) => e.runId === run.id && e.kind === 'run-started')).toBe(true);
  });

  it('starts with an empty cluster and this machine detected through nvidia-smi', async () => {
    const state = await core.handlers.getCluster(undefined);
    expect(state.config.nodes).toEqual([]);
    const hw = await core.handlers.getHardware(undefined);
    expect(hw.gpus.filter((g) => g.vendor === 'nvidia')).toHaveLength(3);
    expect(hw.nvidia.available).toBe(true);
  });

  it('importing the sample replaces the cluster, writes cluster.yaml and tells the windows', async () => {
    const result = await core.handlers.importCluster({ fileName: 'sample.yaml', text: sample, mode: 'replace' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.state.config.nodes.map((n) => n.name)).toEqual(['desktop', 'jetson', 'intel-box']);
    expect(result.state.summary).toContain('Cluster: 3 node(s), 5 adapter slots');
    const onDisk = parseClusterYaml(readFileSync(path.join(dir, 'cluster.yaml'), 'utf8'));
    expect(onDisk.ok && onDisk.config.nodes).toHaveLength(3);
    expect(seen.some((s) => s.event === 'onCluster')).toBe(true);
  });

  it('an invalid file is refused with line:col and the previous cluster stays, on disk too', async () => {
    await core.handlers.importCluster({ fileName: 'sample.yaml', text: sample, mode: 'replace' });
    const before = readFileSync(path.join(dir, 'cluster.yaml'), 'utf8');
    const bad = readFileSync(path.join(fixtures, 'cluster', 'invalid-type.yaml'), 'utf8');
    const result = await core.handlers.importCluster({ fileName: 'invalid-type.yaml', text: bad, mode: 'replace' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.fileName).toBe('invalid-type.yaml');
    expect(result.errors[0]!.line).toBeGreaterThan(0);
    expect(result.errors[0]!.message).toMatch(/vram_mb/);
    expect((await core.handlers.getCluster(undefined)).config.nodes).toHaveLength(3);
    expect(readFileSync(path.join(dir, 'cluster.yaml'), 'utf8')).toBe(before);
  });

  it('merge adds new nodes and replaces same-named ones; a merge that breaks a rule is refused', async () => {
    await core.handlers.importCluster({ fileName: 'sample.yaml', text: sample, mode: 'replace' });
    const extra = 'nodes:\n  - name: jetson\n    host: jetson2.local\n    transport: ssh\n  - name: lab\n    host: lab.example\n    transport: ssh\n';
    const merged = await core.handlers.importCluster({ fileName: 'extra.yaml', text: extra, mode: 'merge' });
    expect(merged.ok).toBe(true);
    if (!merged.ok) return;
    expect(merged.added).toEqual(['lab']);
    expect(merged.updated).toEqual(['jetson']);
    expect(merged.state.config.nodes.map((n) => n.name)).toEqual(['desktop', 'jetson', 'intel-box', 'lab']);
    expect(merged.state.config.nodes[1]!.host).toBe('jetson2.local');
  });

  it('Add this machine adds a node once, then updates the same node', async () => {
    const first = await core.handlers.addThisMachine(undefined);
    expect(first.action).toBe('added');
    const node = first.state.config.nodes.find((n) => n.name === first.nodeName)!;
    expect(node.gpus).toHaveLength(3);
    expect(node.transport).toBe('local');
    expect(first.state.thisMachineNode).toBe(first.nodeName);
    const second = await core.handlers.addThisMachine(undefined);
    expect(second.action).toBe('updated');
    expect(second.state.config.nodes).toHaveLength(1);
  });

  it('warns when cluster.yaml declares this machine with other VRAM than detected', async () => {
    const added = await core.handlers.addThisMachine(undefined);
    const exported = await core.handlers.exportCluster(undefined);
    const firstVram = added.state.config.nodes[0]!.gpus[0]!.vram_mb;
    const edited = exported.text.replace(`vram_mb: ${firstVram}`, `vram_mb: ${firstVram + 1000}`);
    expect(edited).not.toBe(exported.text);
    const result = await core.handlers.importCluster({ fileName: 'edited.yaml', text: edited, mode: 'replace' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.state.warnings.map((w) => w.message).join('\n')).toMatch(new RegExp(String(firstVram + 1000)));
  });

  it('removing the last node is refused with a message saying what to do', async () => {
    const added = await core.handlers.addThisMachine(undefined);
    await expect(core.handlers.removeNode({ name: added.nodeName })).rejects.toThrow(/last node/);
    await expect(core.handlers.removeNode({ name: 'nope' })).rejects.toThrow(/no node named "nope"/);
  });

  it('requests from a transport are parsed before any handler runs', async () => {
    await expect(dispatchRequest(core.handlers, 'importCluster', { fileName: 'x', text: 42, mode: 'replace' })).rejects.toThrow(
      /importCluster: invalid argument at text/,
    );
    await expect(dispatchRequest(core.handlers, 'rm -rf', undefined)).rejects.toThrow(/unknown request/);
    await expect(dispatchRequest(core.handlers, '__proto__', undefined)).rejects.toThrow(/unknown request/);
  });

  it('a cluster.yaml that is invalid on disk is left untouched and reported', async () => {
    await core.stop();
    const file = path.join(dir, 'broken.yaml');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, 'nodes: []\n');
    core = await startCore(file);
    const state = await core.handlers.getCluster(undefined);
    expect(state.config.nodes).toEqual([]);
    expect(state.warnings[0]!.message).toMatch(/not a valid cluster and was left untouched/);
    expect(readFileSync(file, 'utf8')).toBe('nodes: []\n');
    expect(existsSync(`${file}.bak`)).toBe(false);
  });

  it('a cluster.yaml that is invalid on disk is not overwritten by Add this machine or a merge, only by an explicit replace', async () => {
    await core.stop();
    const file = path.join(dir, 'broken.yaml');
    const { writeFileSync } = await import('node:fs');
    // Ten nodes and one typo: pressing Add this machine must not turn this into a one-node cluster.
    const broken = `${sample}  - name: typo\n    host: h\n    max_adapters: lots\n`;
    writeFileSync(file, broken);
    core = await startCore(file);
    await expect(core.handlers.addThisMachine(undefined)).rejects.toThrow(/broken\.yaml is not a valid cluster.*max_adapters/s);
    await expect(core.handlers.importCluster({ fileName: 'other.yaml', text: sample, mode: 'merge' })).rejects.toThrow(
      /not a valid cluster/,
    );
    expect(readFileSync(file, 'utf8')).toBe(broken);
    expect(existsSync(`${file}.bak`)).toBe(false);

    const replaced = await core.handlers.importCluster({ fileName: 'sample.yaml', text: sample, mode: 'replace' });
    expect(replaced.ok).toBe(true);
    expect(readFileSync(`${file}.bak`, 'utf8')).toBe(broken);
    // The sample's desktop node is this machine (localhost): Add this machine now updates it instead of adding one.
    const added = await core.handlers.addThisMachine(undefined);
    expect(added.state.config.nodes.length).toBe(3);
    expect(readFileSync(file, 'utf8')).not.toBe(broken);
  });

  it('gives the join command with the coordinator URL and token, and an example run that exists', async () => {
    const info = await core.handlers.getCoordinatorInfo(undefined);
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.joinCommand).toBe(`GPU_SHARE_JOIN_TOKEN=${info.joinToken} gpu-share worker --join ${info.url}`);
    // Loopback only: plain HTTP, nothing to pin.
    expect(info.certSha256).toBeNull();
    // Bound to loopback by default: the UI must say other machines cannot join yet, and how to allow it.
    expect(info.reachableFromOtherMachines).toBe(false);
    expect(info.reachability).toMatch(/--coordinator-host 0\.0\.0\.0/);
    const example = await core.handlers.getExampleRun(undefined);
    expect(existsSync(example.command[0]!)).toBe(true);
    expect(example.useGpus).toBe(true);
  });
});
