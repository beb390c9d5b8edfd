/**
 * The re-decision rule for a running `auto` generation (comm-redecide.ts), as a table: hysteresis (over 15 % of a
 * step to send less, within 6 % to go back), the 20 s dwell, retune for a period, relaunch for a strategy only when
 * it pays (seconds saved over the steps left, or a minute of training left to go back to less loss).
 */
import { describe, expect, it } from 'vitest';
import { DOWN_BUDGET, lossiness, MIN_DWELL_MS, redecide, RETURN_MIN_LEFT_S, UP_SHARE, type RedecideInput } from '../../../src-shared/scheduling/comm-redecide';
import type { CommDecision, CommStrategy } from '../../../src-shared/scheduling/comm-types';

const d = (strategy: CommStrategy, localSgdPeriod: number | null, commShare: number | null): CommDecision => ({
  requested: 'auto', strategy, localSgdPeriod: strategy === 'local-sgd' ? localSgdPeriod : null, reason: 'figures', commShare, generation: 2,
});
const DDP = { strategy: 'ddp' as const, localSgdPeriod: null };
const LSGD = (p: number) => ({ strategy: 'local-sgd' as const, localSgdPeriod: p });

function input(over: Partial<RedecideInput>): RedecideInput {
  return { current: DDP, currentShare: 0.05, blind: false, up: d('ddp', null, 0.05), down: d('ddp', null, 0.05), sinceChangeMs: 60_000, stepsLeft: 1000, computeS: 0.1, ...over };
}

describe('redecide', () => {
  const rows: [string, Partial<RedecideInput>, 'keep' | 'retune' | 'relaunch', (CommStrategy | number)?][] = [
    ['ddp within the budget: kept', {}, 'keep'],
    ['ddp at 12 %: inside the 6–15 % band, kept', { currentShare: 0.12, up: d('local-sgd', 3, 0.09), down: d('local-sgd', 5, 0.05) }, 'keep'],
    ['ddp at 92 % (link slowed): relaunch in local-sgd', { currentShare: 0.92, up: d('local-sgd', 109, 0.099), down: d('local-sgd', 180, 0.06) }, 'relaunch', 109],
    ['ddp at 16 % but 20 steps left: the saving does not pay for a relaunch', { currentShare: 0.16, stepsLeft: 20, up: d('local-sgd', 2, 0.08), down: d('local-sgd', 3, 0.06) }, 'keep'],
    ['local-sgd 39 at 18 %: retuned to 77 in place', { current: LSGD(39), currentShare: 0.18, up: d('local-sgd', 77, 0.1), down: d('local-sgd', 130, 0.06) }, 'retune', 77],
    ['local-sgd 39 at 8 %: a shorter period fits 10 % but not 6 %, kept', { current: LSGD(39), currentShare: 0.08, up: d('local-sgd', 31, 0.1), down: d('local-sgd', 54, 0.06) }, 'keep'],
    ['local-sgd 109, link faster: 6 % fits every 40 steps, retuned', { current: LSGD(109), currentShare: 0.03, up: d('local-sgd', 25, 0.1), down: d('local-sgd', 40, 0.06) }, 'retune', 40],
    ['local-sgd 109, link fast again: ddp fits 6 %, relaunch back', { current: LSGD(109), currentShare: 0.001, up: d('ddp', null, 0.05), down: d('ddp', null, 0.05) }, 'relaunch', 'ddp'],
    ['back to ddp with 30 s of training left: kept, says why', { current: LSGD(109), currentShare: 0.001, stepsLeft: 300, up: d('ddp', null, 0.05), down: d('ddp', null, 0.05) }, 'keep'],
    ['within 20 s of the last change: kept whatever the figures', { sinceChangeMs: MIN_DWELL_MS - 1, currentShare: 0.92, up: d('local-sgd', 109, 0.099) }, 'keep'],
    ['decided blind: the figures decide at once (dwell does not apply)', { blind: true, currentShare: 0.92, sinceChangeMs: 0, up: d('local-sgd', 109, 0.099) }, 'relaunch', 109],
    ['decided blind, figures agree: kept', { blind: true, currentShare: 0.05, up: d('ddp', null, 0.05) }, 'keep'],
    ['figures unknown: kept', { currentShare: null, up: d('ddp', null, null), down: d('ddp', null, null) }, 'keep'],
  ];
  it.each(rows)('%s', (_name, over, action, target) => {
    const r = redecide(input(over));
    expect(r.action, r.why).toBe(action);
    if (action === 'keep') expect(r.next).toBeNull();
    if (typeof target === 'number') expect(r.next!.localSgdPeriod).toBe(target);
    if (typeof target === 'string') expect(r.next!.strategy).toBe(target);
  });

  it('says why, with the shares and what the change costs', () => {
    expect(redecide(input({ currentShare: 0.923, up: d('local-sgd', 109, 0.099) })).why).toBe(
      'ddp spends 92.3 % of a step communicating, over 15.0 %: local-sgd every 109 steps; relaunching from the checkpoint saves about 1188 s over the 1000 steps left',
    );
    expect(redecide(input({ current: LSGD(109), currentShare: 0.001, stepsLeft: 300 })).why).toBe(
      `local-sgd every 109 steps kept: ddp would fit, but about 30 s of training is left, under the ${RETURN_MIN_LEFT_S} s a relaunch back is worth`,
    );
    expect(redecide(input({ currentShare: 0.12, up: d('local-sgd', 3, 0.09), down: d('local-sgd', 5, 0.05) })).why).toBe('ddp kept: it spends 12.0 % of a step communicating, inside the 6.0 %–15.0 % band');
  });

  it('the band: a link must cost ×1.5 more before sending less, and fit 0.6× the budget before going back', () => {
    expect(UP_SHARE).toBeCloseTo(0.15);
    expect(DOWN_BUDGET).toBeCloseTo(0.06);
    const at = (share: number) => redecide(input({ currentShare: share, stepsLeft: 10_000, up: d('local-sgd', 4, 0.1) })).action;
    expect(at(0.15)).toBe('keep');
    expect(at(0.1501)).toBe('relaunch');
  });

  it('orders choices from least to most lossy', () => {
    expect([LSGD(8), DDP, LSGD(2), { strategy: 'fp16' as const, localSgdPeriod: null }].sort((a, b) => lossiness(a) - lossiness(b)).map((x) => x.strategy + (x.localSgdPeriod ?? ''))).toEqual(['ddp', 'fp16', 'local-sgd2', 'local-sgd8']);
  });
});
