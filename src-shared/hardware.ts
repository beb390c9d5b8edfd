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
