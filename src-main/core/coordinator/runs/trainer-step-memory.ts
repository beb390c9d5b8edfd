/**
 * What earlier runs of the same trainer reported about their step (gradient bytes, compute seconds, and what its
 * communication measurably cost over which link: `comm_s`, comm-types.ts MeasuredComm), so a new
 * run's first generation is not decided blind. Without it, `auto` starts every run in plain DDP until the
 * trainer's first lines arrive and then relaunches to a cheaper strategy across a slow link — ten seconds lost
 * per run for something the coordinator had already seen. Keyed by what fixes the step's size: the command
 * line (script and its arguments, e.g. `--hidden`), the processes per node and GPU use. The compute time also
 * depends on the machines, so a remembered step is a prior: the generation's own reports replace it (and
 * recheckComm looks again) as soon as they come. Bounded, least recently used first out. Not a table of its own:
 * after a restart it is filled again from the kept runs' step figures and measured comm_s (generation-comm.ts
 * rememberRestored), so a restarted coordinator decides a known trainer's first generation as before.
 */
import type { TrainerCommStats } from '../../../../src-shared/scheduling/comm-types';
import type { RunSpec } from '../../../../src-shared/training';

/** Trainers remembered at most (each entry is a short key and a few numbers). */
export const MAX_REMEMBERED_TRAINERS = 64;
/** Keys longer than this (huge argument lists) are not remembered: bounded memory, whatever a run says. */
const MAX_KEY_CHARS = 4096;

export type TrainerKeyFields = Pick<RunSpec, 'command' | 'nprocPerNode' | 'useGpus'>;

export class TrainerStepMemory {
  private readonly steps = new Map<string, TrainerCommStats>();

  constructor(private readonly capacity = MAX_REMEMBERED_TRAINERS) {}

  /** What this run's trainer reported in an earlier run, or null. */
  recall(spec: TrainerKeyFields): TrainerCommStats | null {
    const key = keyOf(spec);
    const held = key === null ? undefined : this.steps.get(key);
    if (key === null || !held) return null;
    this.steps.delete(key);
    this.steps.set(key, held); // most recently used last
    return held;
  }

  /** What `recall` would say, without counting as a use (a plan looks; only a launch uses it). */
  peek(spec: TrainerKeyFields): TrainerCommStats | null {
    const key = keyOf(spec);
    return (key === null ? undefined : this.steps.get(key)) ?? null;
  }

  /** Keeps what the trainer reported (the newest report wins). */
  remember(spec: TrainerKeyFields, stats: TrainerCommStats): void {
    const key = keyOf(spec);
    if (key === null || !(stats.gradBytes > 0) || !(stats.stepComputeS > 0)) return;
    this.steps.delete(key);
    const powersgd = stats.powersgdBytes !== undefined && stats.powersgdBytes > 0 ? { powersgdBytes: stats.powersgdBytes } : {};
    const m = stats.measured;
    const measured = m && m.seconds >= 0 && m.mbps > 0 ? { measured: { strategy: m.strategy, seconds: m.seconds, mbps: m.mbps, rttMs: m.rttMs } } : {};
    this.steps.set(key, { gradBytes: stats.gradBytes, stepComputeS: stats.stepComputeS, ...powersgd, ...measured });
    while (this.steps.size > this.capacity) this.steps.delete(this.steps.keys().next().value!);
  }

  get size(): number {
    return this.steps.size;
  }
}

function keyOf(spec: TrainerKeyFields): string | null {
  const key = JSON.stringify([spec.command, spec.nprocPerNode, spec.useGpus]);
  return key.length > MAX_KEY_CHARS ? null : key;
}
