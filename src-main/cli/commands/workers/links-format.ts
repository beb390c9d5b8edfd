/**
 * What `gpu-share workers links` prints for people (issue 16, item 1): one row per measured link — from, to,
 * bandwidth, round-trip time, how long ago, and why a probe failed — and, for a handful of nodes, the same as a
 * matrix (rows send, columns receive) so a slow hop stands out at a glance. No links yet says how to measure.
 */
import { formatMbps, type LinkMeasurement } from '../../../../src-shared/links/link-matrix';
import { formatTable, humanAgo } from '../../text-format';

/** Beyond this many nodes the matrix is too wide for a terminal; the table alone is printed. */
export const MATRIX_MAX_NODES = 10;

export const NO_LINKS_TEXT =
  'No links measured yet. Links are measured when a worker joins and every few minutes while workers are idle;\n' +
  'measure every link among the active workers now with: gpu-share workers links --measure\n';

/** "0.42 ms", "12 ms"; '-' when the probe failed. */
export function formatRtt(rttMs: number | null): string {
  if (rttMs === null || !Number.isFinite(rttMs)) return '-';
  if (rttMs < 1) return `${rttMs.toFixed(2)} ms`;
  if (rttMs < 10) return `${rttMs.toFixed(1)} ms`;
  return `${Math.round(rttMs)} ms`;
}

/** A failure reason on one line and short enough for a table cell. */
function reasonCell(error: string | undefined): string {
  if (!error) return '';
  const one = error.replace(/\s+/g, ' ').trim();
  return one.length > 100 ? `${one.slice(0, 99)}…` : one;
}

function tableLines(links: readonly LinkMeasurement[], now: number): string[] {
  const rows = [...links]
    .sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to) || a.fromId - b.fromId || a.toId - b.toId)
    .map((l) => [l.from, l.to, l.mbps === null ? 'failed' : formatMbps(l.mbps), formatRtt(l.rttMs), humanAgo(l.measuredAt, now), l.source ?? 'probe', reasonCell(l.error)]);
  return formatTable(['FROM', 'TO', 'BANDWIDTH', 'RTT', 'MEASURED', 'SOURCE', 'PROBLEM'], rows);
}

/** Rows send, columns receive; "·" on the diagonal, "?" not measured, "failed" a probe that failed. */
function matrixLines(links: readonly LinkMeasurement[]): string[] {
  const names = new Map<number, string>();
  for (const l of links) {
    names.set(l.fromId, l.from);
    names.set(l.toId, l.to);
  }
  const ids = [...names.keys()].sort((a, b) => names.get(a)!.localeCompare(names.get(b)!) || a - b);
  if (ids.length < 2 || ids.length > MATRIX_MAX_NODES) return [];
  const newest = new Map<string, LinkMeasurement>();
  for (const l of links) {
    const key = `${l.fromId}>${l.toId}`;
    const held = newest.get(key);
    if (!held || l.measuredAt > held.measuredAt) newest.set(key, l);
  }
  const rows = ids.map((from) => [
    names.get(from)!,
    ...ids.map((to) => {
      if (from === to) return '·';
      const l = newest.get(`${from}>${to}`);
      if (!l) return '?';
      return l.mbps === null ? 'failed' : formatMbps(l.mbps);
    }),
  ]);
  return ['', 'Bandwidth, sender (row) to receiver (column); ? = not measured:', ...formatTable(['FROM \\ TO', ...ids.map((id) => names.get(id)!)], rows, '  ')];
}

/** The links as a table, then the matrix for 2..10 nodes; NO_LINKS_TEXT when there are none. */
export function formatLinks(links: readonly LinkMeasurement[], now: number): string {
  if (links.length === 0) return NO_LINKS_TEXT;
  return `${[...tableLines(links, now), ...matrixLines(links)].join('\n')}\n`;
}
