/**
 * The drift bound on the local-SGD period (issue 24, item 3): the rule as a table, and the cap it leaves on later
 * auto decisions.
 */
import { describe, expect, it } from 'vitest';
import { boundByDrift, capByDrift, DRIFT_BOUND, shareAtPeriod } from '../../../src-shared/scheduling/drift-bound';
import type { CommDecision } from '../../../src-shared/scheduling/comm-types';

describe('boundByDrift', () => {
  it.each([
    // period, drift, steps it grew over, cap → new period, cap, why
    { period: 18, drift: 0.031, steps: 18, cap: null, next: 9, capAfter: 9, why: 'period 18 → 9: drift 3.1 % over the 2 % bound' },
    { period: 18, drift: 0.019, steps: 18, cap: null, next: null, capAfter: null, why: null }, // under: kept
    { period: 18, drift: 0.02, steps: 18, cap: 18, next: null, capAfter: 18, why: null }, // at the bound: kept, cap unchanged
    { period: 400, drift: 0.2, steps: 400, cap: null, next: 40, capAfter: 40, why: 'period 400 → 40: drift 20 % over the 2 % bound' }, // far over: period × bound / drift
    { period: 3, drift: 0.05, steps: 3, cap: 3, next: 1, capAfter: 1, why: 'period 3 → 1: drift 5 % over the 2 % bound' },
    { period: 1, drift: 0.05, steps: 1, cap: 1, next: null, capAfter: 1, why: 'period 1 kept: drift 5 % over the 2 % bound, and nothing averages more often' },
    { period: 18, drift: 0.05, steps: 1, cap: null, next: null, capAfter: null, why: null }, // the warm-up's every-step average: not judged
    { period: 9, drift: 0.05, steps: 18, cap: 9, next: null, capAfter: 9, why: null }, // grown under the old period, before the change applied
  ])('period $period, drift $drift over $steps steps → $next', ({ period, drift, steps, cap, next, capAfter, why }) => {
    expect(boundByDrift({ period, drift, driftSteps: steps, cap })).toEqual({ period: next, cap: capAfter, why });
  });

  it('a bound of the caller’s: 1 % shortens what 2 % keeps', () => {
    expect(boundByDrift({ period: 10, drift: 0.015, driftSteps: 10, cap: null }).period).toBeNull();
    expect(boundByDrift({ period: 10, drift: 0.015, driftSteps: 10, cap: null, bound: 0.01 })).toMatchObject({ period: 5, why: 'period 10 → 5: drift 1.5 % over the 1 % bound' });
    expect(DRIFT_BOUND).toBe(0.02);
  });
});

describe('capByDrift', () => {
  const fit: CommDecision = { requested: 'auto', strategy: 'local-sgd', localSgdPeriod: 40, reason: 'DDP would spend 80 % of a step', commShare: 0.1, generation: 2 };

  it('holds a longer period at the cap, re-figuring its share and saying why', () => {
    const held = capByDrift(fit, 10);
    expect(held).toMatchObject({ strategy: 'local-sgd', localSgdPeriod: 10, generation: 2 });
    expect(held.reason).toBe("DDP would spend 80 % of a step; held at every 10 steps, the period the members' drift (over the 2 % bound at longer ones) allows");
    // 0.1 of a step at 40 → comm/compute 1/9 → ×4 at 10 → 4/13.
    expect(held.commShare).toBeCloseTo(4 / 13, 10);
  });

  it('leaves a period within the cap, other strategies, and a run without a cap alone', () => {
    expect(capByDrift(fit, 40)).toBe(fit);
    expect(capByDrift(fit, null)).toBe(fit);
    expect(capByDrift(fit, undefined)).toBe(fit);
    const ddp: CommDecision = { ...fit, strategy: 'ddp', localSgdPeriod: null };
    expect(capByDrift(ddp, 1)).toBe(ddp);
  });

  it('shareAtPeriod: an average comes twice as often at half the period', () => {
    expect(shareAtPeriod(0.5, 10, 5)).toBeCloseTo(2 / 3, 10);
    expect(shareAtPeriod(null, 10, 5)).toBeNull();
  });
});
