/**
 * A run's other numbers (`lr`, `eval_loss`, `grad_norm`…: src-shared/runs/progress-metrics.ts), one curve per
 * name, each kept like the loss curve (run-loss-curve.ts: one point a step, rank 0's preferred, a new
 * generation's first point replacing what it resumed over, thinned past the cap). At most MAX_RUN_METRICS names:
 * past them a new name is not kept (the first ones seen stay, so the picker does not change under a reader).
 */
import { MAX_RUN_METRICS } from '../../../../src-shared/runs/progress-metrics';
import type { MetricSeries } from '../../../../src-shared/training';
import { DEFAULT_CURVE_POINTS, RunLossCurve, type PointSource } from './run-loss-curve';

export class RunMetrics {
  private readonly curves = new Map<string, RunLossCurve>();

  constructor(private readonly cap = DEFAULT_CURVE_POINTS) {}

  /**
   * One progress line's metrics (none: null) at `step` of `generation`. Every line counts: a new generation's
   * first one drops what it resumed over from every curve, those it does not print (eval_loss every 50 steps) too.
   */
  add(generation: number, step: number, metrics: Readonly<Record<string, number>> | null | undefined, source: PointSource, resumedFrom: number | null = null): void {
    if (!Number.isSafeInteger(step) || step < 0) return;
    for (const curve of this.curves.values()) curve.startGeneration(generation, step, resumedFrom);
    if (!metrics) return;
    for (const [name, value] of Object.entries(metrics)) this.curve(name)?.add(generation, step, value, source, resumedFrom);
  }

  /** What a run saved before a restart: the curves carry on from it. */
  restore(saved: readonly MetricSeries[]): void {
    for (const s of saved) for (const p of s.points) this.curve(s.name)?.add(p.generation, p.step, p.value, 'rank0');
  }

  /** Every curve with a point, by name. */
  snapshot(): MetricSeries[] {
    const out: MetricSeries[] = [];
    for (const [name, curve] of this.curves) {
      const points = curve.snapshot().map(({ step, loss, generation }) => ({ step, value: loss, generation }));
      if (points.length > 0) out.push({ name, points });
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  private curve(name: string): RunLossCurve | null {
    let curve = this.curves.get(name);
    if (!curve) {
      if (this.curves.size >= MAX_RUN_METRICS) return null;
      curve = new RunLossCurve(this.cap);
      this.curves.set(name, curve);
    }
    return curve;
  }
}
