/** What hardware detection reports about one machine; both processes and the worker protocol use it. */
import type { MemoryType } from './cluster/types';

export type GpuVendor = 'nvidia' | 'amd' | 'intel' | 'apple' | 'other';

export interface DetectedGpu {
  index: number;
  /** nvidia-smi's GPU-… UUID; null where the vendor gives none. */
  uuid: string | null;
  name: string;
  vendor: GpuVendor;
  /** Slug for cluster.yaml's `type`, e.g. rtx-4090, jetson-orin, apple-m2-max. */
  typeSlug: string;
  memoryType: MemoryType;
  /** Total memory the GPU can use, MB. For unified memory this is system RAM. Null when unknown. */
  vramTotalMb: number | null;
  vramUsedMb: number | null;
  vramFreeMb: number | null;
  utilizationPct: number | null;
  temperatureC: number | null;
  source: 'nvidia-smi' | 'systeminformation';
}

export interface NvidiaStatus {
  /** True when nvidia-smi ran and listed at least one GPU. */
  available: boolean;
  /** The nvidia-smi binary used, when one was found. */
  path: string | null;
  /** Why there is no NVIDIA GPU (not found, driver error text, …); null when available. */
  reason: string | null;
  driverVersion: string | null;
}

export interface HardwareSnapshot {
  hostname: string;
  os: string;
  arch: string;
  physicalCores: number;
  logicalCores: number;
  ramTotalMb: number;
  ramAvailableMb: number;
  gpus: DetectedGpu[];
  nvidia: NvidiaStatus;
  /** Parts of detection that failed and fell back (a systeminformation call, a GPU nvidia-smi could not see). */
  warnings?: string[];
  /** ISO time of detection. */
  detectedAt: string;
  tookMs: number;
}

/**
 * GPU utilisation and memory over the last minutes, one column per sample (compact on the wire). The main
 * process keeps it as a bounded ring (the hardware monitor), the page appends live snapshots with the same
 * appendGpuSample, so both hold the same shape and the same bounds.
 */
export interface GpuHistory {
  /** Samples older than this before the newest are dropped, ms. */
  windowMs: number;
  /** Epoch ms of each sample, oldest first. */
  times: number[];
  /** One series per GPU seen in the window; its arrays line up with `times` (null: not reported / absent). */
  gpus: GpuHistorySeries[];
}

export interface GpuHistorySeries {
  /** uuid, or `#index` for GPUs without one. */
  key: string;
  index: number;
  name: string;
  vramTotalMb: number | null;
  utilizationPct: (number | null)[];
  vramUsedMb: (number | null)[];
}

/** Ten minutes of history; at most this many samples and GPUs are kept, whatever the polling rate. */
export const GPU_HISTORY_WINDOW_MS = 10 * 60 * 1000;
export const GPU_HISTORY_MAX_SAMPLES = 600;
export const GPU_HISTORY_MAX_GPUS = 16;

export function emptyGpuHistory(windowMs = GPU_HISTORY_WINDOW_MS): GpuHistory {
  return { windowMs, times: [], gpus: [] };
}

export function gpuHistoryKey(gpu: Pick<DetectedGpu, 'uuid' | 'index'>): string {
  return gpu.uuid ?? `#${gpu.index}`;
}

/**
 * `history` with the GPUs of `snapshot` appended as a sample taken `at` (epoch ms); a new object, the input
 * is left as it was. A sample not newer than the last one replaces it (a re-detect right after a poll). The
 * front is trimmed to the window and GPU_HISTORY_MAX_SAMPLES; a GPU that is gone is dropped once none of its
 * values is left in the window.
 */
export function appendGpuSample(history: GpuHistory, snapshot: Pick<HardwareSnapshot, 'gpus'>, at: number): GpuHistory {
  const last = history.times.length - 1;
  const replace = last >= 0 && at <= history.times[last]!;
  const keep = replace ? last : history.times.length;
  const times = [...history.times.slice(0, keep), replace ? history.times[last]! : at];
  const gpus = history.gpus.map((s) => ({ ...s, utilizationPct: s.utilizationPct.slice(0, keep), vramUsedMb: s.vramUsedMb.slice(0, keep) }));
  for (const gpu of snapshot.gpus) {
    const key = gpuHistoryKey(gpu);
    let series = gpus.find((s) => s.key === key);
    if (!series) {
      if (gpus.length >= GPU_HISTORY_MAX_GPUS) continue;
      series = { key, index: gpu.index, name: gpu.name, vramTotalMb: null, utilizationPct: Array(keep).fill(null), vramUsedMb: Array(keep).fill(null) };
      gpus.push(series);
    }
    series.index = gpu.index;
    series.name = gpu.name;
    series.vramTotalMb = gpu.vramTotalMb;
    series.utilizationPct.push(gpu.utilizationPct);
    series.vramUsedMb.push(gpu.vramUsedMb);
  }
  for (const series of gpus) {
    if (series.utilizationPct.length < times.length) {
      series.utilizationPct.push(null);
      series.vramUsedMb.push(null);
    }
  }
  const present = new Set(snapshot.gpus.map(gpuHistoryKey));
  const newest = times[times.length - 1]!;
  let drop = Math.max(0, times.length - GPU_HISTORY_MAX_SAMPLES);
  while (drop < times.length - 1 && newest - times[drop]! > history.windowMs) drop++;
  return {
    windowMs: history.windowMs,
    times: times.slice(drop),
    gpus: gpus
      .map((s) => ({ ...s, utilizationPct: s.utilizationPct.slice(drop), vramUsedMb: s.vramUsedMb.slice(drop) }))
      .filter((s) => present.has(s.key) || s.utilizationPct.some((v) => v !== null) || s.vramUsedMb.some((v) => v !== null)),
  };
}
