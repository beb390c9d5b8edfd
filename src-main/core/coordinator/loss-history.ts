/**
 * Loss per step for the run's curve, capped: past the cap every other point is dropped and later points are
 * taken at the doubled stride, so a week-long run still draws from ~2,000 points spread over all of it.
 */

export const DEFAULT_LOSS_POINTS = 2000;

export class LossHistory {
  private points: { step: number; loss: number }[] = [];
  private stride = 1;

  constructor(private readonly cap = DEFAULT_LOSS_POINTS) {}

  /**
   * Adds a point. A step at or before the last one means the trainer resumed from an earlier checkpoint:
   * the points after it are replaced, so the curve shows what the model actually went through.
   */
  add(step: number, loss: number): void {
    if (!Number.isFinite(loss)) return;
    const last = this.points.at(-1);
    if (last && step <= last.step) {
      while (this.points.length > 0 && this.points.at(-1)!.step >= step) this.points.pop();
    } else if (last && step - last.step < this.stride) {
      return;
    }
    this.points.push({ step, loss });
    if (this.points.length > this.cap) {
      this.points = this.points.filter((_, i) => i % 2 === 0 || i === this.points.length - 1);
      this.stride *= 2;
    }
  }

  snapshot(): { step: number; loss: number }[] {
    return this.points.map((p) => ({ ...p }));
  }
}
