// Which peers a member asks first (the link map: fastest measured first, unmeasured after, never itself or one
// without a server), and where members fetching at once start in the file list.
import { describe, expect, it } from 'vitest';
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import { rankPeers, stripeOrder, type PeerCandidate } from '../../../src-shared/projects/peer-sources';

const cand = (workerId: number, over: Partial<PeerCandidate> = {}): PeerCandidate => ({ workerId, node: `n${workerId}`, host: `10.0.0.${workerId}`, blobPort: 7000 + workerId, ...over });
const link = (fromId: number, toId: number, mbps: number | null, measuredAt = 1): LinkMeasurement => ({ fromId, toId, from: `n${fromId}`, to: `n${toId}`, mbps, rttMs: mbps === null ? null : 1, measuredAt });

describe('rankPeers', () => {
  it('puts the fastest measured link first, unmeasured ones after by id, and never the member itself', () => {
    const links = [link(1, 2, 50), link(1, 3, 900), link(4, 1, 300)];
    const ranked = rankPeers(1, [cand(1), cand(2), cand(3), cand(4), cand(6), cand(5)], links);
    expect(ranked.map((p) => p.workerId)).toEqual([3, 4, 2, 5, 6]);
    expect(ranked[0]).toEqual({ workerId: 3, node: 'n3', host: '10.0.0.3', port: 7003 });
  });

  it('takes the slower direction of a link measured both ways, and treats a failed probe as unmeasured', () => {
    const links = [link(1, 2, 900), link(2, 1, 10), link(1, 3, 100), link(1, 4, null)];
    expect(rankPeers(1, [cand(2), cand(3), cand(4)], links).map((p) => p.workerId)).toEqual([3, 2, 4]);
  });

  it('leaves out members without an address or a blob server (older agents), and keeps at most max', () => {
    const ranked = rankPeers(1, [cand(2, { host: null }), cand(3, { blobPort: null }), cand(4), cand(5), cand(6)], [], 2);
    expect(ranked.map((p) => p.workerId)).toEqual([4, 5]);
  });
});

describe('stripeOrder', () => {
  const files = Array.from({ length: 8 }, (_, i) => i);
  it('starts each of count members at a different part of the list, every file once', () => {
    expect(stripeOrder(files, { index: 0, count: 4 })).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(stripeOrder(files, { index: 1, count: 4 })).toEqual([2, 3, 4, 5, 6, 7, 0, 1]);
    expect(stripeOrder(files, { index: 3, count: 4 })).toEqual([6, 7, 0, 1, 2, 3, 4, 5]);
    expect([...stripeOrder(files, { index: 2, count: 3 })].sort()).toEqual(files);
  });
  it('keeps the order without a stripe, for one member, or for an empty list', () => {
    expect(stripeOrder(files, undefined)).toEqual(files);
    expect(stripeOrder(files, { index: 0, count: 1 })).toEqual(files);
    expect(stripeOrder([], { index: 1, count: 2 })).toEqual([]);
  });
});
