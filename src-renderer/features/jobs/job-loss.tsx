/**
 * A job's loss chart (Jobs view, issue 25), from the GPU_SHARE_PROGRESS lines of its output as the page holds it
 * (the bounded tail the coordinator keeps): one point a step, the newest line's loss for a step printed twice (a
 * retried attempt goes over the same steps). Drawn by the run page's LossChart, smoothing, log scale and zoom
 * included. Nothing is drawn before the second point.
 */
import { useMemo } from 'react';
import { parseProgressLine, splitLines } from '../../../src-shared/runs/output-lines';
import type { LossPoint } from '../../../src-shared/training';
import { LossChart } from '../../charts/loss-chart';

/** The loss per step the output's progress lines gave, by step. */
export function jobLossPoints(output: string): LossPoint[] {
  const byStep = new Map<number, number>();
  for (const line of splitLines(output)) {
    const p = parseProgressLine(line);
    if (p && p.loss !== null && Number.isSafeInteger(p.step)) byStep.set(p.step, p.loss);
  }
  return [...byStep].sort((a, b) => a[0] - b[0]).map(([step, loss]) => ({ step, loss, generation: 1 }));
}

export function JobLossChart({ output }: { output: string }) {
  const points = useMemo(() => jobLossPoints(output), [output]);
  if (points.length < 2) return null;
  return (
    <section className="job-loss" data-testid="job-loss" aria-label="Loss of this job">
      <LossChart points={points} />
    </section>
  );
}
