/**
 * What the agent's heartbeat says about how busy its machine is: CPU (from the per-core times between two
 * readings), RAM in use, and each GPU's utilisation and memory (one live nvidia-smi poll, the same one the app's
 * hardware monitor makes). A heartbeat never waits for nvidia-smi: it sends the last reading and a new one starts
 * in the background when due. Before the first reading, or without the join's hardware, the heartbeat says nothing.
 */
import os from 'node:os';
import type { HardwareSnapshot } from '../../src-shared/hardware';
import { cpuBusyPct, resourcesFromSnapshot, type CpuTimes, type WorkerResources } from '../../src-shared/resources/worker-resources';
import { pollLiveHardware } from '../platform/hardware/hardware-monitor';

/** A reading is taken at most this often (the run view's resolution; nvidia-smi costs tens of ms). */
export const RESOURCE_INTERVAL_MS = 3000;

export interface ResourceSamplerOptions {
  /** The hardware the join detected (its nvidia-smi, GPUs and RAM total); null before it. */
  hardware: () => HardwareSnapshot | null;
  env: () => NodeJS.ProcessEnv;
  now?: () => number;
  /** Per-core CPU times; default os.cpus(). */
  cpuTimes?: () => CpuTimes[];
  poll?: typeof pollLiveHardware;
}

export class ResourceSampler {
  private last: WorkerResources | null = null;
  private askedAt = -Infinity;
  private pending: Promise<void> | null = null;
  private cpuBefore: CpuTimes[] | null = null;

  constructor(private readonly opts: ResourceSamplerOptions) {}

  /** The heartbeat's `resources` field: the last reading, if any; starts the next one when due. */
  beat(): { resources?: WorkerResources } {
    this.refresh();
    return this.last ? { resources: this.last } : {};
  }

  /** Resolves once the reading in flight has finished (for tests). */
  async settled(): Promise<void> {
    await this.pending;
  }

  private refresh(): void {
    const now = (this.opts.now ?? Date.now)();
    const hardware = this.opts.hardware();
    if (!hardware || this.pending || now - this.askedAt < RESOURCE_INTERVAL_MS) return;
    this.askedAt = now;
    const times = this.opts.cpuTimes ?? (() => os.cpus().map((c) => c.times));
    const poll = this.opts.poll ?? pollLiveHardware;
    this.pending = poll(hardware, { env: this.opts.env() })
      .then(
        (result) => {
          const cpuNow = times();
          const cpu = this.cpuBefore ? cpuBusyPct(this.cpuBefore, cpuNow) : null;
          this.cpuBefore = cpuNow;
          this.last = resourcesFromSnapshot(result.snapshot, cpu);
        },
        () => {
          this.last = null; // a poll that threw: the beats say nothing rather than repeat an old reading as new
        },
      )
      .finally(() => {
        this.pending = null;
      });
  }
}
