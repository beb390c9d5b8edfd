/**
 * Keeps this machine's hardware snapshot current: a full detection on demand, and while started a cheap live
 * poll (GPU memory/utilisation/temperature from one nvidia-smi call, RAM available) every couple of seconds.
 *
 * Subscribers hear only about changes that matter: any change of discrete GPU memory, utilisation, temperature,
 * the NVIDIA status or the GPU list, and RAM (or unified GPU memory, which is RAM) moving by at least
 * RAM_CHANGE_MB since the last notification — RAM drifts by a few MB every second and the UI need not repaint
 * for that. current() always has the latest values. Polls never overlap: a tick that finds one running is
 * skipped, and a poll that finishes after a full refresh (or stop) is discarded.
 *
 * Every accepted snapshot, changed or not, also goes into a bounded GPU history (utilisation and memory over
 * the last GPU_HISTORY_WINDOW_MS), held here in the main process so a view opened later still draws it.
 */
import os from 'node:os';
import si from 'systeminformation';
import { appendGpuSample, emptyGpuHistory, type DetectedGpu, type GpuHistory, type HardwareSnapshot } from '../../../src-shared/hardware';
import type { Clock } from '../ports';
import { systemClock } from '../ports';
import { detectHardware, withUnifiedRam } from './detect-hardware';
import { runNvidiaSmi } from './nvidia-smi';
import { LIVE_GPU_FIELDS, parseQueryGpuCsv, queryGpuArgs, type ParsedGpuRow } from './query-gpu-csv';

export const DEFAULT_HARDWARE_POLL_MS = 2000;
export const RAM_CHANGE_MB = 64;

export interface LivePollResult {
  snapshot: HardwareSnapshot;
  /** The GPUs nvidia-smi lists are not the ones the snapshot has (hot-plug, MIG change): detect again. */
  gpuSetChanged: boolean;
}

export interface HardwareMonitorOptions {
  clock?: Clock;
  intervalMs?: number;
  detect?: typeof detectHardware;
  /** The live update; default pollLiveHardware. */
  poll?: (previous: HardwareSnapshot) => Promise<LivePollResult>;
  /** Environment for detection (GPU_SHARE_NVIDIA_SMI, PATH). */
  env?: NodeJS.ProcessEnv;
  /** How far back gpuHistory() reaches (default GPU_HISTORY_WINDOW_MS). */
  historyWindowMs?: number;
}

export class HardwareMonitor {
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private readonly detect: typeof detectHardware;
  private readonly poll: (previous: HardwareSnapshot) => Promise<LivePollResult>;
  private readonly env: NodeJS.ProcessEnv | undefined;
  private readonly listeners = new Set<(s: HardwareSnapshot) => void>();
  private snapshot: HardwareSnapshot | null = null;
  private notified: HardwareSnapshot | null = null;
  private history: GpuHistory;
  private timer: { cancel(): void } | null = null;
  private polling = false;
  private refreshing: Promise<HardwareSnapshot> | null = null;
  /** Bumped by refresh() and stop(); a poll that started under an older one is discarded. */
  private generation = 0;

  constructor(opts: HardwareMonitorOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.intervalMs = opts.intervalMs ?? DEFAULT_HARDWARE_POLL_MS;
    this.detect = opts.detect ?? detectHardware;
    this.poll = opts.poll ?? ((previous) => pollLiveHardware(previous, this.env ? { env: this.env } : {}));
    this.env = opts.env;
    this.history = emptyGpuHistory(opts.historyWindowMs);
  }

  current(): HardwareSnapshot | null {
    return this.snapshot;
  }

  /** GPU utilisation and memory of every poll in the window, oldest first (bounded; see src-shared/hardware.ts). */
  gpuHistory(): GpuHistory {
    return this.history;
  }

  /** Full detection; concurrent calls share one run. */
  refresh(): Promise<HardwareSnapshot> {
    if (this.refreshing) return this.refreshing;
    this.generation++;
    const run = (async () => {
      try {
        const snapshot = await (this.env ? this.detect({ env: this.env }) : this.detect());
        this.accept(snapshot);
        return snapshot;
      } finally {
        this.refreshing = null;
      }
    })();
    this.refreshing = run;
    return run;
  }

  subscribe(listener: (s: HardwareSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  start(): void {
    if (this.timer || this.intervalMs <= 0) return;
    this.timer = this.clock.setInterval(() => void this.pollNow(), this.intervalMs);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
    this.generation++;
  }

  /**
   * One live poll now (a full detection if there is no snapshot yet). Resolves to the new snapshot, or null
   * when it was skipped (a poll or refresh already running) or discarded; never rejects.
   */
  async pollNow(): Promise<HardwareSnapshot | null> {
    if (this.polling || this.refreshing) return null;
    const previous = this.snapshot;
    if (!previous) return this.refresh().catch(() => null);
    this.polling = true;
    const generation = this.generation;
    try {
      const result = await this.poll(previous);
      if (generation !== this.generation) return null;
      if (result.gpuSetChanged) {
        this.polling = false;
        return await this.refresh();
      }
      this.accept(result.snapshot);
      return result.snapshot;
    } catch {
      return null;
    } finally {
      this.polling = false;
    }
  }

  private accept(snapshot: HardwareSnapshot): void {
    this.snapshot = snapshot;
    this.history = appendGpuSample(this.history, snapshot, this.clock.now());
    if (this.notified && !meaningfullyDifferent(this.notified, snapshot)) return;
    this.notified = snapshot;
    for (const listener of [...this.listeners]) {
      try {
        listener(snapshot);
      } catch {
        // One broken listener must not starve the others.
      }
    }
  }
}

/** True when `b` differs from `a` in something a person watching would want to see (see the file comment). */
export function meaningfullyDifferent(a: HardwareSnapshot, b: HardwareSnapshot): boolean {
  if (a.hostname !== b.hostname || a.ramTotalMb !== b.ramTotalMb || a.gpus.length !== b.gpus.length) return true;
  if (Math.abs(a.ramAvailableMb - b.ramAvailableMb) >= RAM_CHANGE_MB) return true;
  if (a.nvidia.available !== b.nvidia.available || a.nvidia.reason !== b.nvidia.reason || a.nvidia.path !== b.nvidia.path) return true;
  return a.gpus.some((g, i) => gpuDiffers(g, b.gpus[i]!));
}

function gpuDiffers(a: DetectedGpu, b: DetectedGpu): boolean {
  if (a.uuid !== b.uuid || a.name !== b.name || a.memoryType !== b.memoryType || a.vramTotalMb !== b.vramTotalMb) return true;
  if (a.utilizationPct !== b.utilizationPct || a.temperatureC !== b.temperatureC) return true;
  if (a.memoryType === 'unified') {
    return Math.abs((a.vramUsedMb ?? 0) - (b.vramUsedMb ?? 0)) >= RAM_CHANGE_MB || (a.vramUsedMb === null) !== (b.vramUsedMb === null);
  }
  return a.vramUsedMb !== b.vramUsedMb || a.vramFreeMb !== b.vramFreeMb;
}

/**
 * The cheap update: one nvidia-smi call for live GPU values (only when the snapshot has an nvidia-smi and NVIDIA
 * GPUs) and RAM available. nvidia-smi failing now marks NVIDIA unavailable with its reason and blanks the live
 * values; it is asked again next time, so a driver that comes back is noticed.
 */
export async function pollLiveHardware(previous: HardwareSnapshot, opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<LivePollResult> {
  const nvidiaGpus = previous.gpus.filter((g) => g.vendor === 'nvidia');
  const smiPath = previous.nvidia.path;
  const [ram, smi] = await Promise.all([
    availableRamMb(),
    smiPath && nvidiaGpus.length > 0
      ? runNvidiaSmi(smiPath, queryGpuArgs(LIVE_GPU_FIELDS), { timeoutMs: opts.timeoutMs ?? 3000, ...(opts.env ? { env: opts.env } : {}) })
      : Promise.resolve(null),
  ]);

  let nvidia = previous.nvidia;
  let rows: ParsedGpuRow[] | null = null;
  if (smi && smi.ok) {
    try {
      rows = parseQueryGpuCsv(smi.stdout, LIVE_GPU_FIELDS);
      nvidia = { ...previous.nvidia, available: true, reason: null };
    } catch (error) {
      nvidia = { ...previous.nvidia, available: false, reason: `nvidia-smi output could not be read: ${(error as Error).message}` };
    }
  } else if (smi && !smi.ok) {
    nvidia = { ...previous.nvidia, available: false, reason: smi.reason };
  }

  let gpuSetChanged = false;
  if (rows) {
    const key = (uuid: string | null, index: number | null) => uuid ?? `#${index}`;
    const listed = new Set(rows.map((r) => key(r.uuid, r.index)));
    const known = new Set(nvidiaGpus.map((g) => key(g.uuid, g.index)));
    gpuSetChanged = listed.size !== known.size || [...listed].some((k) => !known.has(k));
  }

  const ramAvailableMb = ram ?? previous.ramAvailableMb;
  const rowFor = (gpu: DetectedGpu) => rows?.find((r) => (gpu.uuid !== null ? r.uuid === gpu.uuid : r.index === gpu.index));
  const blank = { vramUsedMb: null, vramFreeMb: null, utilizationPct: null, temperatureC: null };
  const gpus = previous.gpus.map((gpu): DetectedGpu => {
    const row = gpu.vendor === 'nvidia' ? rowFor(gpu) : undefined;
    if (gpu.memoryType === 'unified') {
      const live = withUnifiedRam(gpu, previous.ramTotalMb, ramAvailableMb);
      return row ? { ...live, utilizationPct: row.utilizationGpuPct, temperatureC: row.temperatureC } : live;
    }
    if (gpu.vendor !== 'nvidia' || smi === null) return gpu;
    if (!row) return { ...gpu, ...blank };
    return { ...gpu, vramUsedMb: row.memoryUsedMib, vramFreeMb: row.memoryFreeMib, utilizationPct: row.utilizationGpuPct, temperatureC: row.temperatureC };
  });

  return {
    snapshot: { ...previous, ramAvailableMb, gpus, nvidia, detectedAt: new Date().toISOString() },
    gpuSetChanged,
  };
}

async function availableRamMb(): Promise<number | null> {
  try {
    const mem = await si.mem();
    if (mem.available > 0) return Math.floor(mem.available / 1048576);
  } catch {
    // fall through to node:os
  }
  const free = os.freemem();
  return free > 0 ? Math.floor(free / 1048576) : null;
}
