/**
 * The rule that keeps a training run's links measured (link-evidence.ts), as a table: a trainer's round against
 * the link it trained over (probe when slower than the model by over ×2 and by enough to matter; record when it
 * agrees or shows the link faster), the rate a round implies, and when a link is stale.
 */
import { describe, expect, it } from 'vitest';
import { EVIDENCE_FACTOR, impliedMbps, staleWhy, TRAINING_LINK_MAX_AGE_MS, weighEvidence, type TrainingRound } from '../../../src-shared/scheduling/link-evidence';

const LINK = { from: 'alpha', to: 'beta', mbps: 5400, rttMs: 0.1 };
/** 3 MB of gradients over two members, 0.1 s of compute: the issue's --hidden 512 --layers 3 example. */
const round = (over: Partial<TrainingRound>): TrainingRound => ({ strategy: 'ddp', seconds: 0.0046, gradBytes: 3e6, powersgdBytes: null, n: 2, computeS: 0.1, ...over });
/** Seconds the model gives one all-reduce of `bytes` over two members at `mbps`, RTT 0.1 ms. */
const model = (bytes: number, mbps: number) => (bytes * 8) / (mbps * 1e6) + 2 * 0.0001;

describe('weighing a trainer\'s round against the map', () => {
  const rows: [string, Partial<TrainingRound>, Partial<typeof LINK>, 'probe' | 'record' | 'confirm' | 'nothing'][] = [
    ['ddp as modelled: confirmed', { seconds: model(3e6, 5400) }, {}, 'confirm'],
    ['ddp ×1.9 the model (gloo CPU work): confirmed', { seconds: 1.9 * model(3e6, 5400) }, {}, 'confirm'],
    ['ddp ×260 (the link fell to 20 Mbit/s): probe', { seconds: model(3e6, 20) }, {}, 'probe'],
    ['×3 but 2 ms on a 1 s step: not worth a probe', { seconds: 3 * model(3e6, 5400), computeS: 1 }, {}, 'confirm'],
    ['local-sgd average 1.2 s over a 20 Mbit/s link: confirmed', { strategy: 'local-sgd', seconds: model(3e6, 20) }, { mbps: 20 }, 'confirm'],
    ['local-sgd average of 5 ms over a "20 Mbit/s" link: faster than the map, recorded and probed', { strategy: 'local-sgd', seconds: model(3e6, 5400) }, { mbps: 20 }, 'record'],
    ['fp16 sends half the bytes: its own model', { strategy: 'fp16', seconds: model(1.5e6, 100) }, { mbps: 100 }, 'confirm'],
    ['powersgd as reported (two all-reduces): its own model', { strategy: 'powersgd', powersgdBytes: 1e5, seconds: model(1e5, 100) + 2 * 0.0001 }, { mbps: 100 }, 'confirm'],
    ['a failed probe (no rate): nothing to weigh against', { seconds: 5 }, { mbps: null as unknown as number }, 'nothing'],
    ['one member: nothing to weigh', { n: 1, seconds: 5 }, {}, 'nothing'],
  ];
  it.each(rows)('%s', (_name, r, l, verdict) => {
    const e = weighEvidence(round(r), { ...LINK, ...l });
    const got = e.remeasure !== null ? (e.trainingMbps !== null ? 'record' : 'probe') : e.trainingMbps !== null ? 'confirm' : 'nothing';
    expect(got, JSON.stringify(e)).toBe(verdict);
  });

  it('names the figures that disputed the map', () => {
    const e = weighEvidence(round({ seconds: 1.2 }), LINK);
    expect(e.remeasure).toBe("the trainer's ddp step took 1.20 s communicating, ×258.4 the 4.6 ms the model gives the 5.4 Gbit/s alpha–beta link");
    const faster = weighEvidence(round({ strategy: 'local-sgd', seconds: 0.0046 }), { ...LINK, mbps: 20 });
    expect(faster.remeasure).toBe("the trainer's model average took 4.6 ms communicating: at least 5.5 Gbit/s, faster than the 20.0 Mbit/s alpha–beta link");
  });

  it('the factor is 2: just under it agrees, just over it probes', () => {
    const m = model(3e6, 100);
    expect(weighEvidence(round({ seconds: m * EVIDENCE_FACTOR * 0.99 }), { ...LINK, mbps: 100 }).remeasure).toBeNull();
    expect(weighEvidence(round({ seconds: m * EVIDENCE_FACTOR * 1.01 }), { ...LINK, mbps: 100 }).remeasure).not.toBeNull();
  });
});

describe('the rate a round implies', () => {
  it('inverts the ring model: 2(n-1)/n of the bytes in the seconds left after the round trips', () => {
    expect(impliedMbps(round({ seconds: model(3e6, 20) }), 0.1)).toBeCloseTo(20, 6);
    expect(impliedMbps(round({ n: 4, seconds: ((2 * 3) / 4) * 3e6 * 8 / 100e6 + 6 * 0.001 }), 1)).toBeCloseTo(100, 6);
    expect(impliedMbps(round({ strategy: 'fp16', seconds: model(1.5e6, 50) }), 0.1)).toBeCloseTo(50, 6);
  });

  it('is null when the round is all latency, or the figures are not usable', () => {
    expect(impliedMbps(round({ seconds: 0.0001 }), 0.1)).toBeNull();
    expect(impliedMbps(round({ seconds: 0 }), 0.1)).toBeNull();
    expect(impliedMbps(round({ seconds: Number.NaN }), 0.1)).toBeNull();
    expect(impliedMbps(round({ n: 1 }), 0.1)).toBeNull();
  });
});

describe('when a ring link is stale', () => {
  const now = 1_000_000;
  it('over a minute old, never measured, or its members\' heartbeats slow', () => {
    const link = { from: 'alpha', to: 'beta', measuredAt: now - TRAINING_LINK_MAX_AGE_MS };
    expect(staleWhy(link, now)).toBeNull();
    expect(staleWhy({ ...link, measuredAt: now - TRAINING_LINK_MAX_AGE_MS - 1000 }, now)).toBe('measured 61 s ago (over 60 s while training)');
    expect(staleWhy(null, now)).toBe('not measured yet');
    expect(staleWhy(link, now, ['beta'])).toBe('heartbeats from beta arrive over 3 intervals apart');
  });
});
