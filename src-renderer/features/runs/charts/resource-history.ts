/**
 * Every worker's resources over time (CPU, RAM, GPU utilisation and memory), recorded in the page from the
 * heartbeat figures each worker snapshot carries (shared/resources/worker-resources.ts) and seeded from what the
 * coordinator kept of a run (run-series-seed.ts), bounded per worker and in workers; and the four percentage series a member's chart draws, over the GPUs it holds in the run.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import { useStore } from 'zustand';
import { appendResources, mergeResources, MAX_RESOURCE_WORKERS, type ResourceHistory, type WorkerResourcesSample } from '../../../../src-shared/resources/worker-resources';
import type { WorkerSnapshot } from '../../../../src-shared/training';
import type { AppStore } from '../../../store/apply';
import { startRecorder } from '../../../charts/page-recorder';

export type ResourcesByWorker = Record<number, ResourceHistory>;

/** Each worker's new sample (a newer heartbeat figure than the last one kept); the longest-quiet beyond the bound go. */
export function recordWorkers(byWorker: ResourcesByWorker, workers: readonly WorkerSnapshot[]): ResourcesByWorker {
  let next = byWorker;
  for (const w of workers) {
    if (!w.resources) continue;
    const before = next[w.id];
    const after = appendResources(before, w.node, w.resources);
    if (after !== before) next = { ...next, [w.id]: after };
  }
  const ids = Object.keys(next).map(Number);
  if (ids.length > MAX_RESOURCE_WORKERS) {
    const newest = (id: number) => next[id]!.samples.at(-1)?.at ?? 0;
    const keep = new Set(ids.sort((a, b) => newest(b) - newest(a)).slice(0, MAX_RESOURCE_WORKERS));
    next = Object.fromEntries(Object.entries(next).filter(([id]) => keep.has(Number(id))));
  }
  return next;
}

export const resourceStore: StoreApi<ResourcesByWorker> = createStore<ResourcesByWorker>()(() => ({}));

export function useResourceHistory(workerId: number): ResourceHistory | undefined {
  return useStore(resourceStore, (s) => s[workerId]);
}

/** Records the resources of every worker update the page receives from now on; returns the function that stops it. */
export function startResourceRecorder(app: AppStore, store: StoreApi<ResourcesByWorker> = resourceStore): () => void {
  return startRecorder(app, store, (s) => s.workers, recordWorkers);
}

/** A run's members' histories as the coordinator kept them, merged with what the page recorded of those workers. */
export function seedResources(store: StoreApi<ResourcesByWorker>, kept: Record<number, ResourceHistory>): void {
  store.setState((s) => {
    const next = { ...s };
    for (const [id, history] of Object.entries(kept)) next[Number(id)] = mergeResources(s[Number(id)], history);
    return next;
  }, true);
}

export interface MemberSeries {
  at: number[];
  cpu: number[];
  ram: number[];
  gpuUtil: number[];
  gpuMem: number[];
  /** Whether any sample reported a GPU (a CPU member draws no GPU lines). */
  hasGpu: boolean;
}

const pctOf = (used: number | null, total: number | null) => (used === null || !total ? NaN : Math.min(100, (used / total) * 100));

/**
 * The member's four series in percent: CPU busy, RAM in use, and over the GPUs it holds (every GPU of the machine
 * when that is not known) the mean utilisation and the share of memory in use. NaN where a sample said nothing.
 */
export function memberSeries(samples: readonly WorkerResourcesSample[], gpuIndices: readonly number[] | null): MemberSeries {
  const out: MemberSeries = { at: [], cpu: [], ram: [], gpuUtil: [], gpuMem: [], hasGpu: false };
  for (const s of samples) {
    const held = gpuIndices && gpuIndices.length > 0 ? s.gpus.filter((g) => gpuIndices.includes(g.index)) : gpuIndices === null ? s.gpus : [];
    const utils = held.map((g) => g.utilPct).filter((v): v is number => v !== null);
    const used = held.reduce((sum, g) => sum + (g.memUsedMb ?? 0), 0);
    const total = held.reduce((sum, g) => sum + (g.memUsedMb === null ? 0 : (g.memTotalMb ?? 0)), 0);
    if (held.length > 0) out.hasGpu = true;
    out.at.push(s.at);
    out.cpu.push(s.cpuPct ?? NaN);
    out.ram.push(pctOf(s.ramUsedMb, s.ramTotalMb));
    out.gpuUtil.push(utils.length > 0 ? utils.reduce((a, b) => a + b, 0) / utils.length : NaN);
    out.gpuMem.push(total > 0 ? pctOf(used, total) : NaN);
  }
  return out;
}
