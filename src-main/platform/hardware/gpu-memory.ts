/**
 * GPU memory as the job ledger needs it: how much each GPU has free, and how much a job's process tree really
 * holds. Both come from nvidia-smi (the same strict compute-apps parser and pid-tree rule as the residency
 * probe: a job's trainer may fork, and the process holding memory is then a child of the pid we started).
 *
 * Heartbeats must not wait for nvidia-smi, so the sampler answers from its last reading and starts a new one
 * in the background when the old one is due: compute apps at most every second while jobs run, free memory at
 * most every 5 s. One query at a time; a failed query leaves "unknown" (null), never a stale number presented
 * as new.
 */
import type { DetectedGpu } from '../../../src-shared/hardware';
import type { GpuFree } from '../../../src-shared/jobs/job-protocol';
import type { Clock } from '../ports';
import { runNvidiaSmi } from './nvidia-smi';
import { descendantPids } from './process-tree';
import { parseQueryGpuCsv, queryGpuArgs } from './query-gpu-csv';
import { COMPUTE_APPS_ARGS, parseComputeApps, type ComputeApp } from './residency';

export const GPU_FREE_FIELDS = ['index', 'uuid', 'memory.free'] as const;
/** Free memory is asked for at most this often. */
export const GPU_FREE_INTERVAL_MS = 5000;
/** A job tree's memory is asked for at most this often. */
export const COMPUTE_APPS_INTERVAL_MS = 1000;
const QUERY_TIMEOUT_MS = 3000;

/**
 * nvidia-smi's rows as GpuFree entries, indexed like the join's GPU list (`joined`, matched by UUID; the row's
 * own index when the UUID is unknown). A GPU without a number (unified memory prints [N/A]) is left out.
 */
export function gpuFreeFromCsv(text: string, joined: readonly Pick<DetectedGpu, 'uuid'>[]): GpuFree[] {
  const rows = parseQueryGpuCsv(text, GPU_FREE_FIELDS);
  const out: GpuFree[] = [];
  rows.forEach((row, position) => {
    if (row.memoryFreeMib === null) return;
    const at = row.uuid === null ? -1 : joined.findIndex((g) => g.uuid === row.uuid);
    out.push({ index: at !== -1 ? at : (row.index ?? position), uuid: row.uuid, freeMb: row.memoryFreeMib });
  });
  return out;
}

/** MiB held by `root` and the processes of its tree (`tree`), summed over every row (several GPUs included). */
export function treeUsedMib(root: number, tree: readonly number[], apps: readonly ComputeApp[]): number {
  const ours = new Set([root, ...tree]);
  return apps.reduce((sum, app) => (ours.has(app.pid) ? sum + app.usedMib : sum), 0);
}

export interface GpuMemorySamplerOptions {
  clock: Clock;
  /** nvidia-smi to ask, or null when this machine has no working NVIDIA GPU (then nothing is measured). */
  nvidiaSmiPath: () => string | null;
  /** The GPUs as the join listed them, for the indices of gpuFree. */
  gpus: () => readonly DetectedGpu[];
  env?: NodeJS.ProcessEnv;
  /** The live descendants of a pid; default /proc. */
  descendants?: (pid: number) => number[];
  log?: (line: string) => void;
}

interface Reading<T> {
  value: T | null;
  /** Monotonic time the query started; -Infinity before the first. */
  askedAt: number;
  /** The query on its way, if any. */
  pending: Promise<void> | null;
}

export class GpuMemorySampler {
  private free: Reading<GpuFree[]> = { value: null, askedAt: -Infinity, pending: null };
  private apps: Reading<ComputeApp[]> = { value: null, askedAt: -Infinity, pending: null };
  private lastProblem = '';

  constructor(private readonly opts: GpuMemorySamplerOptions) {}

  /** Free memory per GPU from the last reading (undefined without NVIDIA GPUs or before a reading); refreshes when due. */
  gpuFree(): GpuFree[] | undefined {
    const smi = this.opts.nvidiaSmiPath();
    if (smi === null) return undefined;
    this.refresh(this.free, GPU_FREE_INTERVAL_MS, () => this.queryFree(smi));
    return this.free.value ?? undefined;
  }

  /**
   * What the tree of each pid holds now, MiB, from the last reading; null for every pid when there is no
   * NVIDIA GPU or no reading yet. Starts a fresh reading when one is due.
   */
  usedMib(pids: readonly number[]): Map<number, number | null> {
    const result = new Map<number, number | null>();
    const smi = this.opts.nvidiaSmiPath();
    if (smi !== null && pids.length > 0) this.refresh(this.apps, COMPUTE_APPS_INTERVAL_MS, () => this.queryApps(smi));
    const apps = smi === null ? null : this.apps.value;
    const descendants = this.opts.descendants ?? descendantPids;
    for (const pid of pids) result.set(pid, apps === null ? null : treeUsedMib(pid, descendants(pid), apps));
    return result;
  }

  /** Resolves once the queries in flight have answered (for tests and a final beat). */
  async settled(): Promise<void> {
    await Promise.all([this.free.pending, this.apps.pending]);
  }

  private refresh<T>(reading: Reading<T>, everyMs: number, query: () => Promise<T | null>): void {
    const now = this.opts.clock.monotonic();
    if (reading.pending || now - reading.askedAt < everyMs) return;
    reading.askedAt = now;
    reading.pending = query().then((value) => {
      reading.value = value;
      reading.pending = null;
    });
  }

  private async queryFree(smi: string): Promise<GpuFree[] | null> {
    const answer = await runNvidiaSmi(smi, queryGpuArgs(GPU_FREE_FIELDS), { timeoutMs: QUERY_TIMEOUT_MS, ...(this.opts.env ? { env: this.opts.env } : {}) });
    if (!answer.ok) return this.problem(`free GPU memory unknown: ${answer.reason}`);
    try {
      return gpuFreeFromCsv(answer.stdout, this.opts.gpus());
    } catch (error) {
      return this.problem(`free GPU memory unknown: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async queryApps(smi: string): Promise<ComputeApp[] | null> {
    const answer = await runNvidiaSmi(smi, COMPUTE_APPS_ARGS, { timeoutMs: QUERY_TIMEOUT_MS, ...(this.opts.env ? { env: this.opts.env } : {}) });
    if (!answer.ok) return this.problem(`job GPU memory unknown: ${answer.reason}`);
    const apps = parseComputeApps(answer.stdout);
    return apps ?? this.problem('job GPU memory unknown: nvidia-smi --query-compute-apps printed something that is not "<pid>, <MiB>" lines');
  }

  /** Logs each distinct problem once, so a broken driver does not fill the log every second. */
  private problem(message: string): null {
    if (message !== this.lastProblem) this.opts.log?.(message);
    this.lastProblem = message;
    return null;
  }
}
