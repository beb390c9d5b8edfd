/**
 * The order a generation's members stand in on the all-reduce ring, and who hosts its rendezvous store
 * (issue 16). A ring all-reduce is as fast as its slowest hop, and a ring of four over two fast pairs joined
 * by a slow link crosses the slow link twice in one order and four times in another: so well-connected members
 * stand next to each other. The order is a greedy widest-next path tried from every member and scored by its
 * slowest hop (then its total), ties to the lowest worker id, and the current order is kept unless a better one
 * is measured — so nothing moves while links are unknown. Pure.
 */
import { formatMbps, linkBetween, type LinkMeasurement } from '../links/link-matrix';

export interface RingMember {
  workerId: number;
  node: string;
}

export interface RingPlan {
  /** Worker ids in ring order: position i is GPU_SHARE_NODE_RANK i, and the shards follow it. */
  order: number[];
  /** Worker ids best first for hosting the c10d store: the best worst-link to the others first. */
  storeHostOrder: number[];
  /** The slowest link on the ring; null with fewer than two members or while a ring link is unmeasured. */
  slowest: LinkMeasurement | null;
  /** Said when some ring links are far slower than the fastest (under a quarter of it), naming them. */
  note: string | null;
}

/** Greedy starts tried at most (each costs n² lookups). */
const MAX_STARTS = 64;

/** Unknown links rank below every measured one. */
const UNKNOWN = -1;

type Bandwidth = (a: number, b: number) => number;

function ringEdges(order: readonly number[]): [number, number][] {
  if (order.length < 2) return [];
  if (order.length === 2) return [[order[0]!, order[1]!]];
  return order.map((id, i) => [id, order[(i + 1) % order.length]!]);
}

/** [slowest hop, sum of hops]: higher is better, compared in that order. */
function score(order: readonly number[], bw: Bandwidth): [number, number] {
  const hops = ringEdges(order).map(([a, b]) => bw(a, b));
  if (hops.length === 0) return [0, 0];
  return [Math.min(...hops), hops.reduce((s, h) => s + h, 0)];
}

function better(a: [number, number], b: [number, number]): boolean {
  return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
}

function greedyFrom(start: number, ids: readonly number[], bw: Bandwidth): number[] {
  const path = [start];
  const left = new Set(ids.filter((id) => id !== start));
  while (left.size > 0) {
    const last = path[path.length - 1]!;
    let next: number | null = null;
    for (const id of left) {
      if (next === null || bw(last, id) > bw(last, next) || (bw(last, id) === bw(last, next) && id < next)) next = id;
    }
    path.push(next!);
    left.delete(next!);
  }
  return path;
}

/** Ring order, store-host preference, the ring's slowest link and a note when one link holds the run back. */
export function orderRing(members: readonly RingMember[], links: readonly LinkMeasurement[]): RingPlan {
  const current = members.map((m) => m.workerId);
  const ids = new Set(current);
  // Only these members' links, and only sane figures (a broken or hostile one counts as unmeasured).
  const ours = links.filter((l) => ids.has(l.fromId) && ids.has(l.toId) && (l.mbps === null || (Number.isFinite(l.mbps) && l.mbps >= 0)));
  const memo = new Map<string, LinkMeasurement | null>();
  const link = (a: number, b: number): LinkMeasurement | null => {
    const key = a < b ? `${a}:${b}` : `${b}:${a}`;
    if (!memo.has(key)) memo.set(key, linkBetween(ours, a, b));
    return memo.get(key)!;
  };
  const bw: Bandwidth = (a, b) => link(a, b)?.mbps ?? UNKNOWN;

  let order = current;
  let best = score(current, bw);
  const starts = [...current].sort((a, b) => a - b).slice(0, MAX_STARTS);
  for (const s of starts) {
    const candidate = greedyFrom(s, current, bw);
    const sc = score(candidate, bw);
    if (better(sc, best)) {
      order = candidate;
      best = sc;
    }
  }
  if (order !== current && current.length > 0) {
    // The same ring, turned so the current first member stays first (rank 0 moves only when it must).
    const at = order.indexOf(current[0]!);
    order = [...order.slice(at), ...order.slice(0, at)];
  }

  const worst = new Map(current.map((id) => [id, current.length < 2 ? 0 : Math.min(...current.filter((o) => o !== id).map((o) => bw(id, o)))]));
  const storeHostOrder = [...current].sort((a, b) => worst.get(b)! - worst.get(a)!);

  const hops = ringEdges(order).map(([a, b]) => link(a, b));
  const measured = hops.filter((l): l is LinkMeasurement => l !== null);
  const slowest = hops.length > 0 && measured.length === hops.length ? measured.reduce((s, l) => ((l.mbps ?? 0) < (s.mbps ?? 0) ? l : s)) : null;
  const note = slowest && measured.length >= 3 && measured.length === hops.length ? slowLinkNote(measured) : null;
  return { order, storeHostOrder, slowest, note };
}

/**
 * Names the ring's links that run under a quarter of its fastest, or null when none or all do. A member behind a
 * slow cable slows both of its ring links: then the note names the member, not two links.
 */
function slowLinkNote(ring: LinkMeasurement[]): string | null {
  const rate = (l: LinkMeasurement) => l.mbps ?? 0;
  const fastest = Math.max(...ring.map(rate));
  const slow = ring.filter((l) => rate(l) * 4 < fastest);
  if (slow.length === 0 || slow.length === ring.length) return null;
  const others = formatMbps(Math.min(...ring.filter((l) => !slow.includes(l)).map(rate)));
  const tail = `the other links ${others} or more: this run trains at the speed of its slowest link`;
  const lo = Math.min(...slow.map(rate));
  const hi = Math.max(...slow.map(rate));
  const [loText, hiText] = [formatMbps(lo), formatMbps(hi)];
  const unit = (text: string) => text.slice(text.lastIndexOf(' '));
  const range = loText === hiText ? loText : unit(loText) === unit(hiText) ? `${loText.slice(0, -unit(loText).length)}–${hiText}` : `${loText}–${hiText}`;
  if (slow.length === 1) return `${slow[0]!.from}–${slow[0]!.to} measures ${range}, ${tail}`;
  const ends = slow.map((l) => [l.from, l.to]);
  const shared = ends[0]!.filter((name) => ends.every((pair) => pair.includes(name)));
  if (shared.length === 1) return `${shared[0]}'s links measure ${range}, ${tail}`;
  return `${slow.map((l) => `${l.from}–${l.to}`).join(', ')} measure ${range}, ${tail}`;
}
