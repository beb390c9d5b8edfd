/**
 * One convention for step numbers everywhere a person reads them (run page, toast, `runs list`/`show`, jobs):
 * steps done. A trainer's progress line names the index of the step it just finished, counted from 0, so the
 * last line of a 300-step run says 299 and means "300 of 300 done".
 */

/** Steps done after the step with this index. */
export function stepsDone(step: number): number {
  return step + 1;
}

/** "120 of 300" (capped at the total), or "120" when the trainer does not say how many. */
export function stepsOfTotal(step: number, totalSteps: number | null): string {
  const done = stepsDone(step);
  return totalSteps && totalSteps > 0 ? `${Math.min(done, totalSteps)} of ${totalSteps}` : String(done);
}

/** "120/300" for a table cell, or "120". */
export function stepsCell(step: number, totalSteps: number | null): string {
  const done = stepsDone(step);
  return totalSteps && totalSteps > 0 ? `${Math.min(done, totalSteps)}/${totalSteps}` : String(done);
}

/** Done of total as a fraction 0–1, or null without a total. */
export function stepsFraction(step: number, totalSteps: number | null): number | null {
  return totalSteps && totalSteps > 0 ? Math.min(1, Math.max(0, stepsDone(step) / totalSteps)) : null;
}
