/**
 * "Use GPUs" told the truth (issue 17 defect 4): a run that asks for GPUs on a cluster whose workers have none is
 * refused before it starts — by the coordinator (POST /v1/runs) and, before that, by the run form, whose box is
 * unticked and disabled with this reason — and a run that asked for GPUs but whose residency probe found it off
 * the GPU does not end as a plain success: its end says where it trained on the CPU.
 */
import type { ResidencyVerdict, WorkerState } from '../training';

/** What the check reads of a worker (WorkerSnapshot and the coordinator's member record both have it). */
export interface GpuWorkerFacts {
  node: string;
  state: WorkerState;
  gpus: readonly unknown[];
}

/** States in which a worker can take a run (the coordinator's LIVE_STATES). */
const LIVE: ReadonlySet<WorkerState> = new Set(['syncing', 'active', 'draining']);

/**
 * Why a run asking for GPUs cannot get one from these workers, or null when some live worker has an NVIDIA GPU
 * — or none is live yet (the run then waits for a worker, as any run does).
 */
export function noGpuReason(workers: readonly GpuWorkerFacts[]): string | null {
  const live = workers.filter((w) => LIVE.has(w.state));
  if (live.length === 0 || live.some((w) => w.gpus.length > 0)) return null;
  const names = live.map((w) => w.node);
  const shown = names.length > 4 ? `${names.slice(0, 4).join(', ')} and ${names.length - 4} more` : names.join(', ');
  const who = live.length === 1 ? `the only worker, ${shown}, has` : `none of the ${live.length} workers (${shown}) has`;
  return `${who} an NVIDIA GPU, so the run would never be placed — start it without "Use GPUs" (CLI: without --gpus) to train on the CPU, or add a worker with an NVIDIA GPU`;
}

/** The nodes (by worker id) whose residency probe found the run's process off the GPU. */
export function offGpuWorkers(residency: Readonly<Record<number, ResidencyVerdict>>): number[] {
  return Object.entries(residency)
    .filter(([, v]) => v.status === 'fail')
    .map(([id]) => Number(id));
}
