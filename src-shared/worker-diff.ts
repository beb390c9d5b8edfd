/**
 * Worker-list changes as diffs. With 1,000 workers beating, sending the whole list to every page each second
 * costs ~1,000 snapshots a second per page even when one worker changed; a diff carries only the workers
 * that changed or appeared and the ids that went away. The page gets the full list once (getWorkers, and
 * again after every reconnect) and applies diffs on top of it.
 */
import type { WorkerSnapshot } from './training';

export interface WorkersDiff {
  /** Workers that are new or differ from the previous list (whole snapshots, not field patches). */
  upsert: WorkerSnapshot[];
  /** Ids in the previous list that are gone. */
  removed: number[];
}

/** What changed from `prev` to `next`, compared field by field; an empty diff when nothing did. */
export function diffWorkers(prev: readonly WorkerSnapshot[], next: readonly WorkerSnapshot[]): WorkersDiff {
  const before = new Map<number, WorkerSnapshot>();
  for (const w of prev) before.set(w.id, w);
  const upsert: WorkerSnapshot[] = [];
  const seen = new Set<number>();
  for (const w of next) {
    seen.add(w.id);
    const old = before.get(w.id);
    if (!old || !sameData(old, w)) upsert.push(w);
  }
  const removed: number[] = [];
  for (const id of before.keys()) if (!seen.has(id)) removed.push(id);
  removed.sort((a, b) => a - b);
  return { upsert, removed };
}

export function isEmptyWorkersDiff(diff: WorkersDiff): boolean {
  return diff.upsert.length === 0 && diff.removed.length === 0;
}

/**
 * Applies a diff to a list, giving a list ordered by worker id. Unchanged workers keep their objects (views
 * skip re-rendering them), and an empty diff returns the list itself.
 */
export function applyWorkersDiff(list: readonly WorkerSnapshot[], diff: WorkersDiff): WorkerSnapshot[] {
  if (isEmptyWorkersDiff(diff) && isSortedById(list)) return list as WorkerSnapshot[];
  const byId = new Map<number, WorkerSnapshot>();
  for (const w of list) byId.set(w.id, w);
  for (const id of diff.removed) byId.delete(id);
  for (const w of diff.upsert) byId.set(w.id, w);
  return sortById([...byId.values()]);
}

/** A list ordered by worker id (join order: ids are handed out in order and never reused). */
export function sortById(list: readonly WorkerSnapshot[]): WorkerSnapshot[] {
  return isSortedById(list) ? [...list] : [...list].sort((a, b) => a.id - b.id);
}

function isSortedById(list: readonly WorkerSnapshot[]): boolean {
  for (let i = 1; i < list.length; i++) if (list[i - 1]!.id >= list[i]!.id) return false;
  return true;
}

/**
 * Deep equality for plain data (what crosses IPC: primitives, arrays, plain objects). Generic on purpose,
 * so a field added to WorkerSnapshot later is compared without anyone remembering to add it here.
 */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => sameData(v, other[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra);
  if (ka.length !== Object.keys(rb).length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(rb, k) && sameData(ra[k], rb[k]));
}
