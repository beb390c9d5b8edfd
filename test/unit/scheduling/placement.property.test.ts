// Random clusters and job batches: no node ever holds more than its slots, no GPU more than its usable budget
// (nor more than nvidia-smi showed free), and every job is either placed where its constraints allow or gets a
// preview in which no node says yes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClusterConfig, GpuConfig } from '../../../src-shared/cluster/types';
import { nodeCapacities, type NodeCapacity, type WorkerFacts } from '../../../src-shared/scheduling/capacity';
import type { Holding } from '../../../src-shared/scheduling/holdings';
import { placeJobs, type JobPlacement, type PendingJob } from '../../../src-shared/scheduling/place-jobs';
import { job } from './builders';

const gpuArb = fc.record({ vram: fc.integer({ min: 1024, max: 81920 }), unified: fc.boolean(), free: fc.option(fc.integer({ min: 0, max: 81920 })) });
const nodeArb = fc.record({
  gpus: fc.array(gpuArb, { maxLength: 3 }),
  slots: fc.integer({ min: 1, max: 8 }),
  online: fc.boolean(),
  declared: fc.boolean(),
  runs: fc.nat({ max: 3 }),
});
const jobArb = fc.record({
  requireCuda: fc.boolean(),
  preferCuda: fc.boolean(),
  minVramGib: fc.integer({ min: 0, max: 40 }),
  measured: fc.option(fc.integer({ min: 100, max: 30000 })),
  host: fc.option(fc.nat({ max: 6 })),
  small: fc.boolean(),
});

type NodeIn = typeof nodeArb extends fc.Arbitrary<infer T> ? T : never;

function build(nodesIn: NodeIn[]): { nodes: NodeCapacity[]; runs: Holding[] } {
  const config: ClusterConfig = { nodes: [] };
  const workers: WorkerFacts[] = [];
  nodesIn.forEach((n, i) => {
    const name = `n${i}`;
    const gpus: GpuConfig[] = n.gpus.map((g, k) => ({ uuid: `GPU-${i}-${k}`, type: 't', vram_mb: g.vram, memory_type: g.unified ? 'unified' : 'discrete' }));
    if (n.declared) config.nodes.push({ name, host: name, transport: 'ssh', gpus, max_adapters: n.slots });
    const free = new Map<number, number>();
    n.gpus.forEach((g, k) => g.free !== null && free.set(k, g.free));
    workers.push({
      workerId: i + 1,
      node: name,
      state: n.online ? 'active' : 'draining',
      gpus: gpus.map((g) => ({ uuid: g.uuid, name: 'gpu', vramTotalMb: g.vram_mb, memoryType: g.memory_type })),
      cpuCores: 8,
      ramMb: 16384,
      gpuFreeMb: free,
    });
  });
  const nodes = nodeCapacities(config, workers, []);
  const runs: Holding[] = [];
  for (const node of nodes) {
    const count = Math.min(nodesIn[Number(node.node.slice(1))]!.runs, node.slots);
    for (let r = 0; r < count; r++) runs.push({ node: node.node, kind: 'run', id: `run-${r}`, name: 'ddp', gpuIndex: null, vramMb: 0 });
  }
  return { nodes, runs };
}

function pendingOf(jobsIn: (typeof jobArb extends fc.Arbitrary<infer T> ? T : never)[], prefix: string): PendingJob[] {
  return jobsIn.map((j, i) =>
    job(
      `${prefix}${i}`,
      {
        requireCuda: j.requireCuda,
        preferCuda: j.preferCuda,
        minVramGib: j.minVramGib,
        allowedHosts: j.host === null ? null : [`n${j.host}`],
        dataMb: j.small ? 100 : null,
        mflops: j.small ? 1e5 : null,
      },
      j.measured,
    ),
  );
}

const asHolding = (p: JobPlacement, measured: boolean): Holding => ({
  node: p.node,
  kind: 'job',
  id: p.jobId,
  name: p.jobId,
  gpuIndex: p.gpuIndex,
  vramMb: p.vramMb,
  measuredMb: measured ? Math.floor(p.vramMb / 2) : null,
});

function checkBudgets(nodes: NodeCapacity[], holdings: Holding[]): void {
  for (const node of nodes) {
    const mine = holdings.filter((h) => h.node === node.node);
    expect(mine.length).toBeLessThanOrEqual(node.slots);
    for (const gpu of node.gpus) {
      const on = mine.filter((h) => h.gpuIndex === gpu.index);
      expect(on.reduce((s, h) => s + h.vramMb, 0)).toBeLessThanOrEqual(gpu.usableMb);
      // What holders may still grow into must fit in what nvidia-smi showed free.
      const unused = on.reduce((s, h) => s + Math.max(0, h.vramMb - (h.measuredMb ?? 0)), 0);
      if (gpu.freeMb !== null) expect(unused).toBeLessThanOrEqual(gpu.freeMb);
    }
  }
}

describe('placement properties', () => {
  it('never overfills a slot or a GPU budget; every job is placed within its constraints or previewed with no yes', () => {
    fc.assert(
      fc.property(
        fc.array(nodeArb, { minLength: 1, maxLength: 7 }),
        fc.array(jobArb, { maxLength: 20 }),
        fc.array(jobArb, { maxLength: 20 }),
        fc.boolean(),
        fc.boolean(),
        (nodesIn, first, second, spread, measureFirst) => {
          const { nodes, runs } = build(nodesIn);
          const opts = { policy: spread ? ('spread' as const) : ('binpack' as const) };
          const batch1 = pendingOf(first, 'a');
          const r1 = placeJobs(batch1, nodes, runs, opts);
          const held = [...runs, ...r1.placements.map((p) => asHolding(p, measureFirst))];
          const batch2 = pendingOf(second, 'b');
          const r2 = placeJobs(batch2, nodes, held, opts);
          const all = [...held, ...r2.placements.map((p) => asHolding(p, false))];
          checkBudgets(nodes, all);

          for (const [batch, r] of [[batch1, r1], [batch2, r2]] as const) {
            const placed = new Map(r.placements.map((p) => [p.jobId, p]));
            expect(placed.size + r.previews.length).toBe(batch.length);
            for (const j of batch) {
              const p = placed.get(j.id);
              if (!p) {
                const preview = r.previews.find((x) => x.jobId === j.id)!;
                expect(preview.verdicts.map((v) => v.node)).toEqual(nodes.map((n) => n.node));
                expect(preview.verdicts.every((v) => !v.ok && v.reason.startsWith(`${v.node}: `))).toBe(true);
                continue;
              }
              const node = nodes.find((n) => n.node === p.node)!;
              expect(node.online).toBe(true);
              expect(p.workerId).toBe(node.workerId);
              if (j.spec.allowedHosts) expect(j.spec.allowedHosts).toContain(p.node);
              if (j.spec.requireCuda) expect(p.gpuIndex).not.toBeNull();
              if (!j.spec.requireCuda && !j.spec.preferCuda) expect(p.gpuIndex).toBeNull();
              if (!j.spec.requireCuda && j.spec.dataMb !== null) expect(p.gpuIndex).toBeNull(); // 100 MB / 1e5 MFLOP: the PCIe rule says CPU
              expect(p.vramMb).toBe(p.gpuIndex === null ? 0 : j.vramMb);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
