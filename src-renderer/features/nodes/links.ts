/**
 * The measured links between workers, for the Nodes view's link map (issue 16): the core's list (getLinks at
 * load and after a reconnect, then onLinks whenever a measurement lands) and the matrix the map draws from it —
 * one row and column per live worker, the newest measurement per ordered pair, each cell's speed class for its
 * colour. Pure transitions and derivations first, then what the bridge subscribes and loads.
 */
import type { EventPayloads, GpuShareApi } from '../../../src-shared/ipc';
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { apply, type AppStore } from '../../store/apply';
import type { AppState } from '../../store/state';

/** Beyond this many nodes the map shows the slowest links as a list instead of a matrix. */
export const LINK_MAP_MAX_NODES = 10;

export function setLinks(s: AppState, links: LinkMeasurement[]): AppState {
  return { ...s, links };
}

/** What the bridge does with the links event (spread into its handlers). */
export function linkEventHandlers(store: AppStore): { onLinks: (list: EventPayloads['onLinks']) => void } {
  return { onLinks: (list) => apply(store, setLinks, list) };
}

/** Fetches the links; at start and after each reconnect. Never throws (an older core has none). */
export async function loadLinks(api: GpuShareApi, store: AppStore): Promise<void> {
  try {
    apply(store, setLinks, await api.getLinks());
  } catch {
    apply(store, setLinks, []);
  }
}

/** Colour class of a link: fast (≥ 500 Mbit/s), ok (≥ 100), slow (≥ 20), very slow, failed, unmeasured. */
export type LinkSpeed = 'fast' | 'ok' | 'slow' | 'very-slow' | 'failed' | 'none';

export function linkSpeed(l: LinkMeasurement | null): LinkSpeed {
  if (!l) return 'none';
  if (l.mbps === null) return 'failed';
  if (l.mbps >= 500) return 'fast';
  if (l.mbps >= 100) return 'ok';
  if (l.mbps >= 20) return 'slow';
  return 'very-slow';
}

export interface LinkMapNode {
  workerId: number;
  node: string;
}

export interface LinkMapModel {
  nodes: LinkMapNode[];
  /** cells[i][j]: the newest measurement from nodes[i] to nodes[j]; null when not measured (and on the diagonal). */
  cells: (LinkMeasurement | null)[][];
  /** How many ordered pairs have a measurement (failed ones too), of nodes × (nodes − 1). */
  measured: number;
}

/**
 * The matrix over the workers that are not gone (active, syncing, draining) plus any worker a link names, in
 * node-name order: a node nobody measured yet shows as a row of "not measured" rather than going missing.
 */
export function linkMapModel(workers: readonly WorkerSnapshot[], links: readonly LinkMeasurement[]): LinkMapModel {
  const byId = new Map<number, string>();
  for (const w of workers) if (w.state !== 'left' && w.state !== 'failed') byId.set(w.id, w.node);
  for (const l of links) {
    if (!byId.has(l.fromId)) byId.set(l.fromId, l.from);
    if (!byId.has(l.toId)) byId.set(l.toId, l.to);
  }
  const nodes = [...byId].map(([workerId, node]) => ({ workerId, node })).sort((a, b) => a.node.localeCompare(b.node) || a.workerId - b.workerId);
  const newest = new Map<string, LinkMeasurement>();
  for (const l of links) {
    const key = `${l.fromId}>${l.toId}`;
    const held = newest.get(key);
    if (!held || l.measuredAt > held.measuredAt) newest.set(key, l);
  }
  const cells = nodes.map((from) => nodes.map((to) => (from.workerId === to.workerId ? null : newest.get(`${from.workerId}>${to.workerId}`) ?? null)));
  const measured = cells.flat().filter((c) => c !== null).length;
  return { nodes, cells, measured };
}
