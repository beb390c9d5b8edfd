/**
 * The points of a run's loss curve: one per step, tagged with the generation that trained it, capped like
 * LossHistory (past the cap every other point goes and the stride doubles, so a week-long run still draws from
 * ~2,000 points spread over all of it).
 *
 * Unlike LossHistory it is fed every progress line of every rank and every worker, in whatever order their
 * output arrives: a step already on the curve is another rank's copy (kept once, rank 0's loss preferred),
 * never a resume. Going back is decided by generations: the first point of a new generation at step k replaces
 * the points at k and after, so the curve shows what the model went through.
 */
import type { LossPoint } from '../../../../src-shared/training';

export const DEFAULT_CURVE_POINTS = 2000;

/** How much a point's loss is trusted: a heartbeat's sample < another rank's line < rank 0's line. */
export type PointSource = 'heartbeat' | 'rank' | 'rank0';
export const TRUST: Readonly<Record<PointSource, number>> = { heartbeat: 0, rank: 1, rank0: 2 };

interface CurvePoint extends LossPoint {
  trust: number;
}

export class RunLossCurve {
  private points: CurvePoint[] = [];
  private stride = 1;
  /** Generation whose first point has truncated the curve (later generations have not trained yet). */
  private truncatedFor = 0;

  constructor(private readonly cap = DEFAULT_CURVE_POINTS) {}

  /**
   * Adds one step's loss. `resumedFrom` (the step the generation resumed from) bounds what a new generation
   * replaces when its first point arrives, so a trainer that prints from k+1 still replaces the old k+1.
   */
  add(generation: number, step: number, loss: number, source: PointSource, resumedFrom: number | null = null): void {
    if (!Number.isFinite(loss) || !Number.isSafeInteger(step) || step < 0) return;
    if (!this.startGeneration(generation, step, resumedFrom)) return; // an old generation's late line: the curve has moved on
    const trust = TRUST[source];
    const at = this.indexOf(step);
    const found = this.points[at];
    if (found && found.step === step) {
      // Another rank's (or the heartbeat's) copy of a step on the curve: keep it once, the most trusted loss.
      if (trust > found.trust || (found.generation < generation && trust >= found.trust)) Object.assign(found, { loss, trust, generation });
      return;
    }
    const before = this.points[at - 1];
    const after = this.points[at];
    // Downsampled: a step closer than the stride to a neighbour is not drawn.
    if (before && step - before.step < this.stride && before.generation === generation) return;
    if (after && after.step - step < this.stride && after.generation === generation) return;
    this.points.splice(at, 0, { step, loss, generation, trust });
    if (this.points.length > this.cap) {
      const last = this.points.length - 1;
      this.points = this.points.filter((_, i) => i % 2 === 0 || i === last);
      this.stride *= 2;
    }
  }

  /**
   * A line of `generation` at `step` arrived: the first of a newer generation drops the points it trained over
   * (from `step`, or from where it resumed when that is earlier). False for an older generation's late line. A
   * curve fed only some lines (a metric printed every 50 steps) is told of the others through this alone.
   */
  startGeneration(generation: number, step: number, resumedFrom: number | null = null): boolean {
    if (generation < this.truncatedFor) return false;
    if (generation > this.truncatedFor) {
      const from = Math.min(step, resumedFrom ?? step);
      while (this.points.length > 0 && this.points.at(-1)!.step >= from) this.points.pop();
      this.truncatedFor = generation;
    }
    return true;
  }

  snapshot(): LossPoint[] {
    return this.points.map(({ step, loss, generation }) => ({ step, loss, generation }));
  }

  /** Index of the first point at or after `step` (binary search: points are ordered by step). */
  private indexOf(step: number): number {
    let lo = 0;
    let hi = this.points.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.points[mid]!.step < step) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
