// The cluster, runs and workers features stand on their own (app-core.ts only wires them): each takes what it
// needs as arguments, answers its own requests and sends its own events, and stops sending when stopped.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import type { EventMethod } from '../../../src-shared/ipc';
import type { CoordinatorChange } from '../../../src-main/core/coordinator/common/change-feed';
import type { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { createClusterFeature } from '../../../src-main/app/cluster-feature';
import { createRunsFeature } from '../../../src-main/app/runs-feature';
import { RequestError } from '../../../src-main/app/ipc-dispatch';

const hardware: HardwareSnapshot = {
  hostname: 'bench-box',
  os: 'linux',
  arch: 'x64',
  physicalCores: 8,
  logicalCores: 16,
  ramTotalMb: 16_384,
  ramAvailableMb: 8_192,
  gpus: [],
  nvidia: { available: false, path: null, reason: 'nvidia-smi not found', driverVersion: null },
  detectedAt: '2026-11-25T00:00:00.000Z',
  tookMs: 1,
};

describe('cluster feature', () => {
  let dir: string;
  const seen: { event: EventMethod; payload: unknown }[] = [];
  const emit = (event: EventMethod, payload: unknown): void => void seen.push({ event, payload });

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-cluster-feature-'));
    seen.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('adds this machine from a fresh look at the hardware, writes cluster.yaml and tells the pages', async () => {
    let looked = 0;
    const file = path.join(dir, 'cluster.yaml');
    const cluster = await createClusterFeature({ path: file, hardware: () => hardware, refreshHardware: async () => (looked++, hardware), emit });
    expect(cluster.config().nodes).toEqual([]);

    const added = await cluster.handlers.addThisMachine(undefined);
    expect(looked).toBe(1);
    expect(added.action).toBe('added');
    expect(cluster.config().nodes.map((n) => n.name)).toEqual([added.nodeName]);
    expect(readFileSync(file, 'utf8')).toContain(`name: ${added.nodeName}`);
    expect(seen.map((s) => s.event)).toEqual(['onCluster']);
    expect(cluster.state().thisMachineNode).toBe(added.nodeName);
  });

  it('refuses every write while the file on disk is not a valid cluster, naming the file and what to do', async () => {
    const file = path.join(dir, 'cluster.yaml');
    writeFileSync(file, 'nodes: [oops\n');
    const cluster = await createClusterFeature({ path: file, hardware: () => hardware, refreshHardware: async () => hardware, emit });
    expect(() => cluster.refuseWhileUnloaded('adding worker 3')).toThrow(RequestError);
    expect(() => cluster.refuseWhileUnloaded('adding worker 3')).toThrow(`${file} is not a valid cluster`);
    await expect(cluster.handlers.addThisMachine(undefined)).rejects.toThrow('so adding this machine would overwrite it');
    expect(readFileSync(file, 'utf8')).toBe('nodes: [oops\n');
    expect(cluster.state().warnings[0]?.message).toContain('was left untouched');
  });
});

describe('runs feature', () => {
  /** A coordinator with only what the runs feature uses: a change feed, and a start that refuses. */
  function fakeCoordinator() {
    const listeners = new Set<(change: CoordinatorChange) => void>();
    const coordinator = {
      subscribe(listener: (change: CoordinatorChange) => void) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      runs: () => [],
      events: () => [],
      runOutput: (runId: string) => `output of ${runId}`,
      runOutputTimes: () => [1_700_000_000_000],
      runSeries: (runId: string) => ({ runId, throughput: null, resources: {} }),
      startRun: () => {
        throw new Error('run "r1" cannot start: no worker has a free GPU');
      },
    } as unknown as CoordinatorService;
    return { coordinator, send: (change: CoordinatorChange) => listeners.forEach((l) => l(change)), listening: () => listeners.size };
  }

  it('sends run output and events to the pages until stopped, and ignores the other changes', async () => {
    const fake = fakeCoordinator();
    const seen: { event: EventMethod; payload: unknown }[] = [];
    const runs = createRunsFeature({ coordinator: fake.coordinator, assetsDir: '/assets', hardware: () => hardware, emit: (event, payload) => void seen.push({ event, payload }) });
    fake.send({ type: 'output', runId: 'run-1', workerId: 2, node: 'beta', data: 'step 3\n', at: 1_700_000_000_000 });
    fake.send({ type: 'workers', workers: [] });
    expect(seen).toEqual([{ event: 'onRunOutput', payload: { runId: 'run-1', workerId: 2, node: 'beta', data: 'step 3\n', at: 1_700_000_000_000 } }]);
    expect(await runs.handlers.getRunOutput({ runId: 'run-1' })).toEqual({ runId: 'run-1', text: 'output of run-1', times: [1_700_000_000_000] });
    expect(await runs.handlers.getRunSeries({ runId: 'run-1' })).toEqual({ runId: 'run-1', throughput: null, resources: {} });

    runs.stop();
    expect(fake.listening()).toBe(0);
  });

  it("words the coordinator's refusal as a request error the page shows as it is", async () => {
    const runs = createRunsFeature({ coordinator: fakeCoordinator().coordinator, assetsDir: '/assets', hardware: () => hardware, emit: () => undefined });
    const example = await runs.handlers.getExampleRun(undefined);
    expect(example.command[0]).toBe(path.join('/assets', 'trainers', 'ddp_example.py'));
    await expect(runs.handlers.startRun(example as never)).rejects.toThrow(new RequestError('run "r1" cannot start: no worker has a free GPU'));
  });
});
