/** The Jobs view's sweep comparison: columns from the jobs' hyper values and metrics, durations, sorting with empties last. */
import { describe, expect, it } from 'vitest';
import { nextSort, sortSweepRows, sweepColumns, sweepRows } from '../../../src-renderer/features/jobs/sweep/sweep-table';
import { jobSnapshot, NOW } from '../cli/jobs-fixtures';
import { jobSpec } from '../state/jobs-fixtures';

const job = (name: string, hyper: Record<string, number | string | boolean>, over: Parameters<typeof jobSnapshot>[1] = {}) => jobSnapshot(name, { spec: { ...jobSpec(name), hyper }, ...over });

const jobs = [
  job('r16-lr3e-3', { lr: 0.003, r: 16 }, { status: 'completed', startedAt: NOW - 60_000, finishedAt: NOW - 20_000, metrics: { eval_loss: 2.204, accuracy: 0.61 }, progress: { step: 39, totalSteps: 40, loss: 2.204 } }),
  job('r8-lr1e-3', { lr: 0.001, r: 8 }, { status: 'completed', startedAt: NOW - 50_000, finishedAt: NOW - 30_000, metrics: { eval_loss: 1.92 } }),
  job('r16-lr1e-2', { lr: 0.01, r: 16, dropout: true }, { status: 'running', startedAt: NOW - 5_000 }),
  job('r4', { r: 4 }),
];

describe('sweep comparison', () => {
  it('has a column per hyper value and per metric, then loss, start, end and duration', () => {
    expect(sweepColumns(jobs).map((c) => c.key)).toEqual(['name', 'status', 'hyper:lr', 'hyper:r', 'hyper:dropout', 'metric:eval_loss', 'metric:accuracy', 'loss', 'started', 'ended', 'duration']);
  });

  it('labels a name that is both a hyper value and a metric with which it is (issue 25 item 8)', () => {
    const both = [job('a1', { alpha: 0.1, r: 8 }, { status: 'completed', metrics: { alpha: 0.93, eval_loss: 1.5 } })];
    const labels = sweepColumns(both).filter((c) => c.key.startsWith('hyper:') || c.key.startsWith('metric:')).map((c) => c.label);
    expect(labels).toEqual(['alpha (hyper)', 'r', 'alpha (metric)', 'eval_loss']);
    expect(new Set(sweepColumns(both).map((c) => c.label)).size).toBe(sweepColumns(both).length);
  });

  it('fills each row; a running job has its duration so far, a pending one none', () => {
    const rows = sweepRows(jobs, sweepColumns(jobs), NOW);
    expect(rows[0]!.cells).toMatchObject({ 'hyper:lr': 0.003, 'metric:eval_loss': 2.204, loss: 2.204, duration: 40_000, ended: NOW - 20_000 });
    expect(rows[1]!.cells['metric:accuracy']).toBeNull();
    expect(rows[2]!.cells).toMatchObject({ 'hyper:dropout': 'true', duration: 5_000, ended: null });
    expect(rows[3]!.cells).toMatchObject({ 'hyper:lr': null, duration: null });
  });

  it('sorts ascending, then descending, then back to the queue order, with empty cells last either way', () => {
    const rows = sweepRows(jobs, sweepColumns(jobs), NOW);
    const names = (sort: Parameters<typeof sortSweepRows>[1]) => sortSweepRows(rows, sort).map((r) => r.cells.name);
    expect(names({ key: 'metric:eval_loss', dir: 'asc' })).toEqual(['r8-lr1e-3', 'r16-lr3e-3', 'r16-lr1e-2', 'r4']);
    expect(names({ key: 'metric:eval_loss', dir: 'desc' })).toEqual(['r16-lr3e-3', 'r8-lr1e-3', 'r16-lr1e-2', 'r4']);
    expect(names({ key: 'hyper:lr', dir: 'desc' })).toEqual(['r16-lr1e-2', 'r16-lr3e-3', 'r8-lr1e-3', 'r4']);
    expect(names({ key: 'name', dir: 'asc' })).toEqual(['r4', 'r8-lr1e-3', 'r16-lr1e-2', 'r16-lr3e-3']);
    expect(names(null)).toEqual(['r16-lr3e-3', 'r8-lr1e-3', 'r16-lr1e-2', 'r4']);
    expect(nextSort(null, 'loss')).toEqual({ key: 'loss', dir: 'asc' });
    expect(nextSort({ key: 'loss', dir: 'asc' }, 'loss')).toEqual({ key: 'loss', dir: 'desc' });
    expect(nextSort({ key: 'loss', dir: 'desc' }, 'loss')).toBeNull();
    expect(nextSort({ key: 'loss', dir: 'desc' }, 'name')).toEqual({ key: 'name', dir: 'asc' });
  });
});
