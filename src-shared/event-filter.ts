/**
 * Which events to show: by run, job, node, kind and least severity. One definition for the Events view (its
 * address, `#/events?run=run-3&severity=warning`) and `gpu-share events` (the same words as options), so a
 * filter means the same thing in both.
 */
import type { CoordinatorEvent } from './training';

export interface EventFilter {
  run?: string;
  job?: string;
  node?: string;
  kind?: string;
  /** Least severity shown: 'warning' shows warnings and errors. */
  severity?: 'warning' | 'error';
}

/** The filter's keys in the order an address or a command line writes them. */
export const EVENT_FILTER_KEYS = ['run', 'job', 'node', 'kind', 'severity'] as const;

/** Longest value kept from an address: longer is not a run, job, node or kind this app made. */
const MAX_VALUE = 256;

export function isEmptyEventFilter(f: EventFilter): boolean {
  return EVENT_FILTER_KEYS.every((k) => f[k] === undefined);
}

export function matchesEventFilter(e: CoordinatorEvent, f: EventFilter): boolean {
  if (f.run !== undefined && e.runId !== f.run) return false;
  if (f.job !== undefined && e.jobId !== f.job) return false;
  if (f.node !== undefined && e.node !== f.node) return false;
  if (f.kind !== undefined && e.kind !== f.kind) return false;
  if (f.severity === 'error' && e.severity !== 'error') return false;
  if (f.severity === 'warning' && e.severity === 'info') return false;
  return true;
}

/** From `run=run-3&severity=warning` (an address's query, as URLSearchParams reads it): unknown keys, empty and too-long values are dropped. */
export function eventFilterFromParams(params: { get(name: string): string | null }): EventFilter {
  const f: EventFilter = {};
  for (const key of EVENT_FILTER_KEYS) {
    const value = params.get(key)?.trim();
    if (!value || value.length > MAX_VALUE) continue;
    if (key === 'severity') {
      if (value === 'warning' || value === 'error') f.severity = value;
    } else f[key] = value;
  }
  return f;
}

/** `run=run-3&severity=warning`, keys always in the same order ('' for no filter). */
export function eventFilterToQuery(f: EventFilter): string {
  const parts: string[] = [];
  for (const key of EVENT_FILTER_KEYS) {
    const value = f[key];
    if (value !== undefined) parts.push(`${key}=${encodeURIComponent(value)}`);
  }
  return parts.join('&');
}

export function sameEventFilter(a: EventFilter, b: EventFilter): boolean {
  return EVENT_FILTER_KEYS.every((k) => a[k] === b[k]);
}
