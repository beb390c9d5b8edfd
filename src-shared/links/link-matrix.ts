/**
 * The measured links between workers: bandwidth and round-trip time per ordered pair, as the sending agent
 * measured them over the address training uses (the one the rendezvous publishes). The scheduler reads it to
 * pick a run's communication strategy and ring order; /v1/state, /metrics, `gpu-share workers links` and the
 * Nodes view's link map show it. Pure: shared by the coordinator, the CLI and the renderer.
 */

/** One measured (or failed) link, sender to receiver. */
export interface LinkMeasurement {
  fromId: number;
  toId: number;
  /** Node names, for people. */
  from: string;
  to: string;
  /** Megabits per second of a bounded timed transfer; null when the probe failed. */
  mbps: number | null;
  /** Round-trip time in milliseconds (the least of a few pings); null when the probe failed. */
  rttMs: number | null;
  /** Epoch ms. */
  measuredAt: number;
  /** Why the probe failed, in words; absent when it worked. */
  error?: string;
  /**
   * Where the figure came from: a timed probe, or a training run's own traffic (bytes and seconds of an all-reduce
   * or model average, link-evidence.ts). Absent: a probe (older coordinators).
   */
  source?: LinkSource;
}

export type LinkSource = 'probe' | 'training';

/** "probe" or "training", for tables and tooltips; absent is a probe. */
export function linkSourceOf(l: Pick<LinkMeasurement, 'source'>): LinkSource {
  return l.source ?? 'probe';
}

/** Every link known now, one per ordered pair of live workers (the newest measurement). */
export interface LinkMatrix {
  links: LinkMeasurement[];
}

/**
 * The link between two workers as training sees it: the newest successful measurement in either direction
 * (a ring sends both ways; the slower direction is what bounds it when both are known).
 */
export function linkBetween(links: readonly LinkMeasurement[], a: number, b: number): LinkMeasurement | null {
  let ab: LinkMeasurement | null = null;
  let ba: LinkMeasurement | null = null;
  for (const l of links) {
    if (l.mbps === null) continue;
    if (l.fromId === a && l.toId === b && (!ab || l.measuredAt > ab.measuredAt)) ab = l;
    if (l.fromId === b && l.toId === a && (!ba || l.measuredAt > ba.measuredAt)) ba = l;
  }
  if (ab && ba) return (ab.mbps ?? 0) <= (ba.mbps ?? 0) ? ab : ba;
  return ab ?? ba;
}

/** "940 Mbit/s", "19.6 Mbit/s", "1.2 Gbit/s" — for tables and tooltips. */
export function formatMbps(mbps: number | null): string {
  if (mbps === null || !Number.isFinite(mbps)) return '—';
  if (mbps >= 1000) return `${(mbps / 1000).toFixed(1)} Gbit/s`;
  if (mbps >= 100) return `${Math.round(mbps)} Mbit/s`;
  return `${mbps.toFixed(1)} Mbit/s`;
}
