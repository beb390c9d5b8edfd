/** orderRing: well-connected members adjacent, the store host, the slow-link note, determinism, nothing moved while unknown. */
import { describe, expect, it } from 'vitest';
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import { orderRing, type RingMember } from '../../../src-shared/scheduling/ring-order';

const NAMES: Record<number, string> = { 1: 'alpha', 2: 'beta', 3: 'gamma', 4: 'delta' };
const member = (id: number): RingMember => ({ workerId: id, node: NAMES[id]! });

function links(pairs: [number, number, number | null][]): LinkMeasurement[] {
  return pairs.map(([a, b, mbps]) => ({ fromId: a, toId: b, from: NAMES[a]!, to: NAMES[b]!, mbps, rttMs: mbps === null ? null : 1, measuredAt: 1 }));
}

// Two fast pairs (alpha–beta, gamma–delta) joined by 100 Mbit/s links, and two 10 Mbit/s diagonals.
const TWO_PAIRS = links([
  [1, 2, 1000],
  [3, 4, 1000],
  [1, 3, 100],
  [2, 4, 100],
  [1, 4, 10],
  [2, 3, 10],
]);

describe('orderRing', () => {
  it('puts well-connected members next to each other and keeps the first member first', () => {
    const plan = orderRing([1, 3, 2, 4].map(member), TWO_PAIRS);
    expect(plan.order).toEqual([1, 2, 4, 3]);
    expect(plan.slowest?.mbps).toBe(100);
  });

  it('is deterministic: the same ring whatever order the links come in', () => {
    const a = orderRing([1, 3, 2, 4].map(member), TWO_PAIRS);
    const b = orderRing([1, 3, 2, 4].map(member), [...TWO_PAIRS].reverse());
    expect(b).toEqual(a);
  });

  it('keeps the current order while nothing is measured, and when no order is better', () => {
    const none = orderRing([3, 1, 2].map(member), []);
    expect(none).toEqual({ order: [3, 1, 2], storeHostOrder: [3, 1, 2], slowest: null, note: null });
    const even = links([[1, 2, 500], [2, 3, 500], [1, 3, 500]]);
    expect(orderRing([3, 1, 2].map(member), even).order).toEqual([3, 1, 2]);
  });

  it('has no slowest link while a ring link is unmeasured or its probe failed', () => {
    expect(orderRing([1, 2, 3].map(member), links([[1, 2, 900], [2, 3, 900]])).slowest).toBeNull();
    expect(orderRing([1, 2, 3].map(member), links([[1, 2, 900], [2, 3, 900], [1, 3, null]])).slowest).toBeNull();
    expect(orderRing([1, 2].map(member), links([[1, 2, 900]])).slowest?.mbps).toBe(900);
  });

  it('prefers as store host the member with the best worst link to the others', () => {
    const l = links([[1, 2, 1000], [1, 3, 20], [2, 3, 1000]]);
    expect(orderRing([1, 2, 3].map(member), l).storeHostOrder).toEqual([2, 1, 3]);
  });

  it('notes one link far slower than the rest', () => {
    const l = links([[1, 2, 940], [1, 3, 990], [2, 3, 19.6]]);
    const plan = orderRing([1, 2, 3].map(member), l);
    expect(plan.note).toBe('beta–gamma measures 19.6 Mbit/s, the other links 940 Mbit/s or more: this run trains at the speed of its slowest link');
    expect(plan.slowest?.mbps).toBe(19.6);
    // Within a factor of four of the fastest: nothing to say.
    expect(orderRing([1, 2, 3].map(member), links([[1, 2, 940], [1, 3, 990], [2, 3, 300]])).note).toBeNull();
  });

  it('names the member behind a slow cable, whose two ring links are both slow', () => {
    // alpha–gamma fast; beta reaches both at ~19 Mbit/s (the link map's picture of one capped host).
    const plan = orderRing([1, 2, 3].map(member), links([[1, 2, 19.0], [1, 3, 1400], [2, 3, 15.9]]));
    expect(plan.note).toBe("beta's links measure 15.9–19.0 Mbit/s, the other links 1.4 Gbit/s or more: this run trains at the speed of its slowest link");
    // Every link slow alike: nothing stands out.
    expect(orderRing([1, 2, 3].map(member), links([[1, 2, 19], [1, 3, 18], [2, 3, 20]])).note).toBeNull();
  });

  it('counts a nonsense figure as unmeasured, and ignores links to workers outside the run', () => {
    const l = [...links([[1, 2, 900], [2, 3, 900], [1, 4, 5]]), { fromId: 1, toId: 3, from: 'alpha', to: 'gamma', mbps: Number.NaN, rttMs: 1, measuredAt: 1 }];
    const plan = orderRing([1, 2, 3].map(member), l);
    expect(plan.slowest).toBeNull();
    expect(plan.storeHostOrder[0]).toBe(2);
    expect(orderRing([1, 2, 3].map(member), [...l, ...links([[1, 3, -7]])]).slowest).toBeNull();
  });

  it('uses the slower direction of a link measured both ways', () => {
    const l = [...links([[1, 2, 900]]), { fromId: 2, toId: 1, from: 'beta', to: 'alpha', mbps: 50, rttMs: 2, measuredAt: 2 }];
    expect(orderRing([1, 2].map(member), l).slowest?.mbps).toBe(50);
  });
});
