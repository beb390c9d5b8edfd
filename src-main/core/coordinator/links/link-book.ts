/**
 * What the coordinator knows of the links between its workers (issue 16, item 1): the newest measurement per
 * ordered pair of live workers, as their agents reported it. A worker that fails, leaves or is forgotten takes
 * its links with it (a machine that comes back may be on another network). Bounded: beyond `maxLinks` the oldest
 * measurements go first, so a huge cluster cannot grow it without end.
 */
import type { LinkMeasurement } from '../../../../src-shared/links/link-matrix';

export const DEFAULT_MAX_LINKS = 4096;

export class LinkBook {
  private readonly byPair = new Map<string, LinkMeasurement>();

  constructor(private readonly maxLinks = DEFAULT_MAX_LINKS) {}

  /** Keeps `m` as the link fromId→toId unless a newer one is already known. */
  record(m: LinkMeasurement): void {
    const key = `${m.fromId}>${m.toId}`;
    const held = this.byPair.get(key);
    if (held && held.measuredAt > m.measuredAt) return;
    // Re-inserted, so the map's order stays oldest-first for the bound below.
    this.byPair.delete(key);
    this.byPair.set(key, m);
    while (this.byPair.size > this.maxLinks) this.byPair.delete(this.byPair.keys().next().value!);
  }

  /** The newest measurement fromId→toId, or undefined. */
  get(fromId: number, toId: number): LinkMeasurement | undefined {
    return this.byPair.get(`${fromId}>${toId}`);
  }

  /** Drops every link to or from the worker. */
  forget(workerId: number): void {
    for (const [key, m] of this.byPair) if (m.fromId === workerId || m.toId === workerId) this.byPair.delete(key);
  }

  /** Every link known, sorted by sender then receiver. */
  links(): LinkMeasurement[] {
    return [...this.byPair.values()].sort((a, b) => a.fromId - b.fromId || a.toId - b.toId);
  }

  get size(): number {
    return this.byPair.size;
  }
}
