/**
 * What each member of a training run asks of its machine, read once from the RunSpec: the same constraints an
 * adapter job has (require_cuda, min_vram_gib, allowed_hosts) plus the whole GPUs a member holds. The scheduler
 * plans from this, never from the spec's fields directly, so a run and a job are judged by one set of rules.
 */
import type { RunSpec } from '../training';

export interface RunDemand {
  minWorkers: number;
  maxWorkers: number;
  /** The torchrun launcher: a member's machine needs a Python with torch. */
  needsTorch: boolean;
  /** Only machines with an NVIDIA GPU may be members (placement.requireCuda, or a useGpus run). */
  requireCuda: boolean;
  /** Each GPU a member holds must have at least this much usable VRAM left (GiB); 0 for none. */
  minVramGib: number;
  /** Only these node names may be members; null: any. */
  allowedHosts: string[] | null;
  /** Whole GPUs each member holds: 0 for a CPU run, 'all' for every GPU of the member's node. */
  gpusPerMember: number | 'all';
}

export function runDemand(spec: RunSpec): RunDemand {
  const placement = spec.placement ?? {};
  return {
    minWorkers: spec.minWorkers,
    maxWorkers: spec.maxWorkers,
    needsTorch: spec.launcher === 'torchrun',
    requireCuda: placement.requireCuda === true || spec.useGpus,
    minVramGib: spec.useGpus ? (placement.minVramGib ?? 0) : 0,
    allowedHosts: placement.allowedHosts ?? null,
    gpusPerMember: spec.useGpus ? (placement.gpusPerMember ?? 'all') : 0,
  };
}
