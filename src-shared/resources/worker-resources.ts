/**
 * What a worker says in each heartbeat about how busy its machine is (CPU, RAM, each GPU's utilisation and
 * memory), so the run view can draw every member's resources over time, not only this machine's. The wire
 * schema (bounded: a forged heartbeat cannot make the coordinator keep megabytes), the sample the agent builds
 * from its live hardware poll, and the bounded per-worker history the coordinator and the page keep. Pure: no node:*.
 */
import { z } from 'zod';
import type { HardwareSnapshot } from '../hardware';
import { thinned, thinningMask } from '../series-thinning';

const pct = z.number().min(0).max(100).nullable();
const mb = z.number().nonnegative().max(1e9).nullable();

export const gpuResourcesSchema = z.object({ index: z.number().int().nonnegative().max(1024), utilPct: pct, memUsedMb: mb, memTotalMb: mb });
export const workerResourcesSchema = z.object({
  cpuPct: pct,
  ramUsedMb: mb,
  ramTotalMb: mb,
  gpus: z.array(gpuResourcesSchema).max(64),
});
export type GpuResources = z.infer<typeof gpuResourcesSchema>;
export type WorkerResources = z.infer<typeof workerResourcesSchema>;

/** The latest sample as the coordinator keeps it on the worker: `at` is when its heartbeat arrived (its clock). */
export type WorkerResourcesSample = WorkerResources & { at: number };

/** A live hardware snapshot (and the CPU share measured beside it) as the heartbeat's resources. */
export function resourcesFromSnapshot(snapshot: Pick<HardwareSnapshot, 'ramTotalMb' | 'ramAvailableMb' | 'gpus'>, cpuPct: number | null): WorkerResources {
  const clampPct = (v: number | null) => (v === null || !Number.isFinite(v) ? null : Math.min(100, Math.max(0, v)));
  const total = snapshot.ramTotalMb > 0 ? snapshot.ramTotalMb : null;
  return {
    cpuPct: clampPct(cpuPct),
    ramUsedMb: total === null ? null : Math.max(0, total - snapshot.ramAvailableMb),
    ramTotalMb: total,
    gpus: snapshot.gpus.slice(0, 64).map((g) => ({
      index: Math.min(1024, Math.max(0, g.index)),
      utilPct: clampPct(g.utilizationPct),
      memUsedMb: g.vramUsedMb,
      memTotalMb: g.vramTotalMb,
    })),
  };
}

/** CPU busy share between two readings of per-core times (os.cpus()), or null when no time passed. */
export function cpuBusyPct(before: readonly CpuTimes[], after: readonly CpuTimes[]): number | null {
  let busy = 0;
  let all = 0;
  after.forEach((t, i) => {
    const b = before[i];
    if (!b) return;
    const total = (x: CpuTimes) => x.user + x.nice + x.sys + x.idle + x.irq;
    const dt = total(t) - total(b);
    if (dt <= 0) return;
    all += dt;
    busy += dt - (t.idle - b.idle);
  });
  return all > 0 ? Math.min(100, Math.max(0, (busy / all) * 100)) : null;
}

export interface CpuTimes {
  user: number;
  nice: number;
  sys: number;
  idle: number;
  irq: number;
}

/** Samples kept per worker (in a run, at the coordinator; in the page): past it the history is thinned (run-series.ts). */
export const MAX_RESOURCE_SAMPLES = 600;
/** Workers whose history the page keeps; the one heard from longest ago goes first. */
export const MAX_RESOURCE_WORKERS = 256;

export interface ResourceHistory {
  node: string;
  samples: WorkerResourcesSample[];
}

/** A worker's history with `sample` appended when it is newer than the last one; bounded. */
export function appendResources(history: ResourceHistory | undefined, node: string, sample: WorkerResourcesSample): ResourceHistory {
  const samples = history?.samples ?? [];
  const last = samples[samples.length - 1];
  if (last && sample.at <= last.at) return history!;
  const next = [...samples, sample];
  return { node, samples: next.length > MAX_RESOURCE_SAMPLES ? thinned(next, thinningMask(next.map((s) => s.at), MAX_RESOURCE_SAMPLES)) : next };
}

/**
 * The page's history of a worker and the coordinator's (`kept`, one run's) as one: the page's samples from
 * before and after the kept ones around them, thinned to the bound.
 */
export function mergeResources(page: ResourceHistory | undefined, kept: ResourceHistory): ResourceHistory {
  const first = kept.samples[0]?.at ?? Infinity;
  const last = kept.samples[kept.samples.length - 1]?.at ?? -Infinity;
  const before = page?.samples.filter((s) => s.at < first) ?? [];
  const after = page?.samples.filter((s) => s.at > last) ?? [];
  const samples = [...before, ...kept.samples, ...after];
  return { node: kept.node, samples: thinned(samples, thinningMask(samples.map((s) => s.at), MAX_RESOURCE_SAMPLES)) };
}
