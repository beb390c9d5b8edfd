// Issue 17, per-worker resources in the run view: the heartbeat carries CPU, RAM and each GPU's utilisation and
// memory (bounded by the schema), the agent's sampler answers from its last reading without waiting for
// nvidia-smi, the coordinator puts the latest figures on the worker's snapshot (a rejoin clears them), and the
// page keeps a bounded history per worker and draws a member's four percentages over the GPUs it holds.
import { describe, expect, it } from 'vitest';
import { ResourceSampler } from '../../../src-main/agent/resource-sampler';
import { memberSeries, recordWorkers } from '../../../src-renderer/features/runs/charts/resource-history';
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import { appendResources, cpuBusyPct, MAX_RESOURCE_SAMPLES, resourcesFromSnapshot, workerResourcesSchema, type WorkerResourcesSample } from '../../../src-shared/resources/worker-resources';
import { heartbeatRequestSchema } from '../../../src-shared/worker-protocol';
import { Harness } from '../coordinator/harness';
import { workerSnapshot } from '../helpers/snapshots';

const gpu = { index: 0, utilizationPct: 87, vramUsedMb: 6000, vramTotalMb: 8000 };
const snapshot = { ramTotalMb: 32000, ramAvailableMb: 8000, gpus: [gpu, { ...gpu, index: 1, utilizationPct: null, vramUsedMb: null }] } as unknown as HardwareSnapshot;
const times = (busy: number, idle: number) => [{ user: busy, nice: 0, sys: 0, idle, irq: 0 }];

describe('the heartbeat resources', () => {
  it('are built from the live hardware poll and bounded by the schema', () => {
    const r = resourcesFromSnapshot(snapshot, 140);
    expect(r).toEqual({ cpuPct: 100, ramUsedMb: 24000, ramTotalMb: 32000, gpus: [{ index: 0, utilPct: 87, memUsedMb: 6000, memTotalMb: 8000 }, { index: 1, utilPct: null, memUsedMb: null, memTotalMb: 8000 }] });
    expect(cpuBusyPct(times(100, 100), times(150, 250))).toBe(25);
    expect(cpuBusyPct(times(1, 1), times(1, 1))).toBeNull();
    expect(heartbeatRequestSchema.parse({ incarnation: 1, resources: r }).resources).toEqual(r);
    expect(workerResourcesSchema.safeParse({ ...r, gpus: Array.from({ length: 65 }, () => r.gpus[0]) }).success).toBe(false);
    expect(workerResourcesSchema.safeParse({ ...r, cpuPct: 101 }).success).toBe(false);
  });

  it('come from the last reading; the next poll starts in the background when due', async () => {
    let now = 0;
    let polls = 0;
    let busy = 0;
    const sampler = new ResourceSampler({
      hardware: () => snapshot,
      env: () => ({}),
      now: () => now,
      cpuTimes: () => times((busy += 50), 100 + busy),
      poll: async (previous) => {
        polls++;
        return { snapshot: previous, gpuSetChanged: false };
      },
    });
    expect(sampler.beat()).toEqual({});
    await sampler.settled();
    expect(sampler.beat().resources?.gpus[0]?.utilPct).toBe(87);
    expect(polls).toBe(1);
    now = 3000;
    sampler.beat();
    await sampler.settled();
    expect(polls).toBe(2);
    expect(sampler.beat().resources?.cpuPct).toBe(50);
    expect(new ResourceSampler({ hardware: () => null, env: () => ({}) }).beat()).toEqual({});
  });

  it("land on the worker's snapshot at its heartbeat, and a rejoin clears them", () => {
    const h = new Harness();
    const w = h.worker('alpha').join();
    h.svc.heartbeat(w.workerId, { incarnation: w.incarnation });
    expect(h.svc.workers()[0]!.resources).toBeUndefined();
    const resources = resourcesFromSnapshot(snapshot, 30);
    h.svc.heartbeat(w.workerId, { incarnation: w.incarnation, resources });
    expect(h.svc.workers()[0]!.resources).toEqual({ ...resources, at: h.svc.workers()[0]!.lastHeartbeatAt });
    w.join();
    expect(h.svc.workers()[0]!.resources).toBeUndefined();
  });
});

describe('the page history', () => {
  const sample = (at: number, over: Partial<WorkerResourcesSample> = {}): WorkerResourcesSample => ({ ...resourcesFromSnapshot(snapshot, 20), at, ...over });

  it('appends newer samples per worker, bounded', () => {
    let byWorker = recordWorkers({}, [workerSnapshot(1, { resources: sample(10) }), workerSnapshot(2)]);
    byWorker = recordWorkers(byWorker, [workerSnapshot(1, { resources: sample(10) })]);
    byWorker = recordWorkers(byWorker, [workerSnapshot(1, { resources: sample(20) })]);
    expect(Object.keys(byWorker)).toEqual(['1']);
    expect(byWorker[1]!.samples.map((s) => s.at)).toEqual([10, 20]);
    let h = appendResources(undefined, 'alpha', sample(0));
    for (let t = 1; t < MAX_RESOURCE_SAMPLES + 10; t++) h = appendResources(h, 'alpha', sample(t));
    expect(h.samples.length).toBeLessThanOrEqual(MAX_RESOURCE_SAMPLES);
    expect(h.samples[0]!.at).toBe(0); // thinned over the whole history, its first sample kept (run-series.ts)
    expect(h.samples.at(-1)!.at).toBe(MAX_RESOURCE_SAMPLES + 9);
  });

  it("draws a member's CPU, RAM and the GPUs it holds in percent", () => {
    const m = memberSeries([sample(1), sample(2, { cpuPct: null })], [0]);
    expect(m).toMatchObject({ cpu: [20, NaN], ram: [75, 75], gpuUtil: [87, 87], gpuMem: [75, 75], hasGpu: true });
    const all = memberSeries([sample(1)], null);
    expect(all.gpuUtil).toEqual([87]); // GPU 1 said no utilisation: the mean is over the GPUs that did
    expect(memberSeries([sample(1)], []).hasGpu).toBe(false);
  });
});
