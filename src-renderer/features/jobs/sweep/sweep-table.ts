/**
 * The sweep comparison's model (Jobs view): one row per job with its hyper values, its final metrics (metrics.json,
 * job-metrics.ts), its last loss, and when it started, ended and how long it took; sortable by any column, with
 * the empty cells last either way. Pure, so the order and every cell are pinned by unit tests.
 */
import { metricNames } from '../../../../src-shared/jobs/job-metrics';
import type { HyperValue, JobSnapshot } from '../../../../src-shared/jobs/types';

export type SweepCell = string | number | null;
export type SweepKind = 'text' | 'number' | 'time' | 'duration';

export interface SweepColumn {
  key: string;
  label: string;
  kind: SweepKind;
}

export interface SweepRow {
  id: string;
  cells: Record<string, SweepCell>;
}

export interface SweepSort {
  key: string;
  dir: 'asc' | 'desc';
}

/** Hyper and metric columns shown at most (a manifest may vary a dozen things; the table stays readable). */
export const MAX_HYPER_COLUMNS = 6;
export const MAX_METRIC_COLUMNS = 6;

function hyperNames(jobs: readonly JobSnapshot[]): string[] {
  const names: string[] = [];
  for (const j of jobs) for (const k of Object.keys(j.spec.hyper)) if (!names.includes(k) && names.length < MAX_HYPER_COLUMNS) names.push(k);
  return names;
}

const hyperCell = (v: HyperValue | undefined): SweepCell => (v === undefined ? null : typeof v === 'boolean' ? String(v) : v);

export function sweepColumns(jobs: readonly JobSnapshot[]): SweepColumn[] {
  const hypers = hyperNames(jobs);
  const metrics = metricNames(jobs.map((j) => j.metrics), MAX_METRIC_COLUMNS);
  // A name that is both a hyper value and a metric (alpha set, alpha reported) is labelled with which it is,
  // else the table shows two "alpha" columns and nobody can tell them apart (issue 25 item 8).
  const both = new Set(hypers.filter((k) => metrics.includes(k)));
  return [
    { key: 'name', label: 'Job', kind: 'text' },
    { key: 'status', label: 'Status', kind: 'text' },
    ...hypers.map((k): SweepColumn => ({ key: `hyper:${k}`, label: both.has(k) ? `${k} (hyper)` : k, kind: 'number' })),
    ...metrics.map((k): SweepColumn => ({ key: `metric:${k}`, label: both.has(k) ? `${k} (metric)` : k, kind: 'number' })),
    { key: 'loss', label: 'Last loss', kind: 'number' },
    { key: 'started', label: 'Started', kind: 'time' },
    { key: 'ended', label: 'Ended', kind: 'time' },
    { key: 'duration', label: 'Duration', kind: 'duration' },
  ];
}

/** `now` gives a running job its duration so far. */
export function sweepRows(jobs: readonly JobSnapshot[], columns: readonly SweepColumn[], now: number): SweepRow[] {
  return jobs.map((j) => {
    const end = j.finishedAt ?? (j.status === 'running' ? now : null);
    const cells: Record<string, SweepCell> = {
      name: j.name,
      status: j.status,
      loss: j.progress?.loss ?? null,
      started: j.startedAt,
      ended: j.finishedAt,
      duration: j.startedAt !== null && end !== null ? end - j.startedAt : null,
    };
    for (const c of columns) {
      if (c.key.startsWith('hyper:')) cells[c.key] = hyperCell(j.spec.hyper[c.key.slice(6)]);
      else if (c.key.startsWith('metric:')) cells[c.key] = j.metrics?.[c.key.slice(7)] ?? null;
    }
    return { id: j.id, cells };
  });
}

function compare(a: SweepCell, b: SweepCell): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

/** Sorted by one column; rows without a value in it go last in either direction; ties keep the queue's order. */
export function sortSweepRows(rows: readonly SweepRow[], sort: SweepSort | null): SweepRow[] {
  if (!sort) return [...rows];
  const sign = sort.dir === 'asc' ? 1 : -1;
  return rows
    .map((row, i) => ({ row, i }))
    .sort((x, y) => {
      const a = x.row.cells[sort.key] ?? null;
      const b = y.row.cells[sort.key] ?? null;
      if (a === null || b === null) return a === b ? x.i - y.i : a === null ? 1 : -1;
      return sign * compare(a, b) || x.i - y.i;
    })
    .map((x) => x.row);
}

/** The next sort after a click on `key`: ascending, then descending, then the queue's order. */
export function nextSort(current: SweepSort | null, key: string): SweepSort | null {
  if (current?.key !== key) return { key, dir: 'asc' };
  return current.dir === 'asc' ? { key, dir: 'desc' } : null;
}
