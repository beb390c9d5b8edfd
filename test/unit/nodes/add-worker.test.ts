// "Add to cluster.yaml" through the app core with real services: the app's own worker joins over loopback
// (GPUs from the fake nvidia-smi), is declared nowhere, and is written into a commented cluster.yaml whose
// comments stay; a second press, an unknown worker and a name already taken are refused and change nothing.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAppCore } from '../../../src-main/app/app-core';
import type { AppCore } from '../../../src-main/app/app-core-types';
import { nodePtySpawner } from '../../../src-main/platform/pty/node-pty-spawner';
import { nodeStatuses } from '../../../src-shared/nodes/node-status';
import type { WorkerSnapshot } from '../../../src-shared/training';

const fixtures = path.resolve(__dirname, '..', '..', 'fixtures');
const CLUSTER = `# my lab — keep this comment
nodes:
  - name: far-away   # the box in the attic
    host: 10.0.0.9
    transport: ssh
    gpus: []
    cpu_cores: 4
    max_adapters: 1
`;

describe('addWorkerToCluster', () => {
  let dir: string;
  let clusterPath: string;
  let core: AppCore;

  // The app's own worker detects hardware from the process's environment, not the core's env option.
  const fakeSmi = {
    GPU_SHARE_NVIDIA_SMI: path.join(fixtures, 'bin', 'nvidia-smi'),
    FAKE_NVIDIA_SMI_QUERY_GPU: path.join(fixtures, 'nvidia-smi', 'query-gpu-csv-header-units-consumer-x3.txt'),
  };
  const saved = { ...process.env };

  beforeEach(async () => {
    Object.assign(process.env, fakeSmi);
    dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-add-worker-'));
    clusterPath = path.join(dir, 'cluster.yaml');
    writeFileSync(clusterPath, CLUSTER);
    core = await createAppCore({
      userData: dir,
      clusterPath,
      notifier: { notify: () => undefined },
      pty: nodePtySpawner,
      coordinatorPort: 0,
      hardwarePollMs: 0,
      env: { ...process.env },
    });
  });

  afterEach(async () => {
    await core.stop();
    rmSync(dir, { recursive: true, force: true });
    for (const key of Object.keys(fakeSmi)) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });

  async function joinedWorker(): Promise<WorkerSnapshot> {
    for (let i = 0; i < 200; i++) {
      const found = (await core.handlers.getWorkers(undefined)).find((w) => w.local && w.state === 'active');
      if (found) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the app\'s own worker did not become active within 10 s');
  }

  it('writes the undeclared worker as a node with its reported GPUs, keeps the comments, then the node is online', async () => {
    const worker = await joinedWorker();
    const before = await core.handlers.getCluster(undefined);
    expect(nodeStatuses(before.config, [worker]).undeclared.map((w) => w.id)).toEqual([worker.id]);

    const state = await core.handlers.addWorkerToCluster({ workerId: worker.id });
    const added = state.config.nodes.find((n) => n.name === worker.node);
    expect(added).toMatchObject({ host: 'localhost', transport: 'local' });
    expect(added!.gpus.map((g) => [g.uuid, g.vram_mb])).toEqual(worker.gpus.map((g) => [g.uuid, g.vramTotalMb]));
    expect(added!.gpus).toHaveLength(3);
    const text = readFileSync(clusterPath, 'utf8');
    expect(text).toContain('# my lab — keep this comment');
    expect(text).toContain('# the box in the attic');
    expect(text).toContain(`name: ${worker.node}`);

    const report = nodeStatuses(state.config, [worker]);
    expect(report.undeclared).toEqual([]);
    expect(report.declared.find((s) => s.node === worker.node)).toMatchObject({ kind: 'online', workerId: worker.id, drift: [] });
  });

  it('refuses a second add, and an unknown worker, leaving the file as it was', async () => {
    const worker = await joinedWorker();
    await core.handlers.addWorkerToCluster({ workerId: worker.id });
    const text = readFileSync(clusterPath, 'utf8');
    await expect(core.handlers.addWorkerToCluster({ workerId: worker.id })).rejects.toThrow(`cluster.yaml already has a node named "${worker.node}"`);
    await expect(core.handlers.addWorkerToCluster({ workerId: 9999 })).rejects.toThrow('there is no worker 9999');
    expect(readFileSync(clusterPath, 'utf8')).toBe(text);
  });
});
