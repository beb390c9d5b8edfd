// Search, filter and compare in the Runs view (issue 25, "compare runs"): the filter over name, command, tags and
// note with state and tag; the picks (2 to 8); the comparison's colours, legend facts and settings that differ;
// and the address that names the runs compared, so a copied link opens the same comparison.
import { describe, expect, it } from 'vitest';
import { formatRoute, parseRoute, sameRoute } from '../../../src-renderer/routing/route';
import { openRoute, routeOfState } from '../../../src-renderer/routing/route-state';
import { compareRuns, lossNear, lossSeries, MAX_COMPARE, togglePick } from '../../../src-renderer/features/runs/compare/run-compare-model';
import { allTags, filterRuns, NO_FILTER } from '../../../src-renderer/features/runs/run-filter';
import { openCompare, selectRun, setRuns } from '../../../src-renderer/features/runs/runs-slice';
import { initialState } from '../../../src-renderer/store/state';
import type { RunSnapshot } from '../../../src-shared/training';
import { runSnapshot } from '../helpers/snapshots';

const base = runSnapshot();
function run(id: string, over: Partial<RunSnapshot> = {}): RunSnapshot {
  return runSnapshot({ id, spec: { ...base.spec, name: `name-${id}` }, ...over });
}

const lr3 = run('run-1', { tags: ['lr-3', 'baseline'], note: 'the first try', state: 'finished', endedAt: 9 });
const lr4 = run('run-2', { tags: ['lr-4'], spec: { ...base.spec, name: 'wider', command: ['python', 'train.py', '--width', '512'] }, state: 'failed', endedAt: 9 });
const live = run('run-3', { state: 'running' });

describe('the run filter', () => {
  it('matches every word against name, id, command, tags and note, any case', () => {
    const all = [lr3, lr4, live];
    expect(filterRuns(all, NO_FILTER)).toEqual(all);
    expect(filterRuns(all, { ...NO_FILTER, text: 'WIDTH 512' }).map((r) => r.id)).toEqual(['run-2']);
    expect(filterRuns(all, { ...NO_FILTER, text: 'first' }).map((r) => r.id)).toEqual(['run-1']);
    expect(filterRuns(all, { ...NO_FILTER, text: 'lr-' }).map((r) => r.id)).toEqual(['run-1', 'run-2']);
    expect(filterRuns(all, { ...NO_FILTER, text: 'lr- wider' }).map((r) => r.id)).toEqual(['run-2']);
  });

  it('filters by state (live, or one end) and by tag', () => {
    const all = [lr3, lr4, live];
    expect(filterRuns(all, { ...NO_FILTER, state: 'live' }).map((r) => r.id)).toEqual(['run-3']);
    expect(filterRuns(all, { ...NO_FILTER, state: 'failed' }).map((r) => r.id)).toEqual(['run-2']);
    expect(filterRuns(all, { ...NO_FILTER, tag: 'baseline' }).map((r) => r.id)).toEqual(['run-1']);
    expect(filterRuns(all, { text: 'lr', state: 'finished', tag: 'lr-4' })).toEqual([]);
    expect(allTags(all)).toEqual(['baseline', 'lr-3', 'lr-4']);
  });
});

describe('the comparison', () => {
  it('picks at most 8 runs, unticking takes one off', () => {
    let picked: string[] = [];
    for (let i = 0; i < 10; i++) picked = togglePick(picked, `run-${i}`);
    expect(picked).toHaveLength(MAX_COMPARE);
    expect(togglePick(picked, 'run-0')).not.toContain('run-0');
  });

  it('gives each run its colour, its final loss and steps, and marks the settings that differ', () => {
    const a = run('run-1', { lossHistory: [{ step: 0, loss: 2, generation: 1 }, { step: 9, loss: 0.5, generation: 1 }] });
    const b = run('run-2', { spec: { ...base.spec, name: 'b', maxWorkers: base.spec.maxWorkers + 2 }, lossHistory: [{ step: 0, loss: 3, generation: 1 }] });
    const c = compareRuns([a, b], ['run-1', 'run-2', 'run-9', 'run-1']);
    expect(c.missing).toEqual(['run-9']);
    expect(c.entries.map((e) => [e.run.id, e.finalLoss, e.steps])).toEqual([['run-1', 0.5, 10], ['run-2', 3, 1]]);
    expect(new Set(c.entries.map((e) => e.color)).size).toBe(2);
    expect(c.settings.find((r) => r.label === 'Workers')).toMatchObject({ differs: true });
    expect(c.settings.find((r) => r.label === 'Command')).toMatchObject({ differs: false });
    const series = lossSeries(c.entries[0]!);
    expect(series).toMatchObject({ key: 'run-1', xs: [0, 9], ys: [2, 0.5], color: c.entries[0]!.color });
    expect(lossNear(series, 7)).toEqual({ step: 9, loss: 0.5 });
  });

  it('lives in the address: #/runs/compare/ID,ID opens it, a run page closes it', () => {
    const route = { view: 'runs' as const, compare: ['run-1', 'run-2'] };
    expect(formatRoute(route)).toBe('#/runs/compare/run-1,run-2');
    expect(parseRoute('#/runs/compare/run-1,run-2')).toEqual(route);
    expect(parseRoute(`#/runs/compare/${Array.from({ length: 9 }, (_, i) => `r${i}`).join(',')}`)).toBeNull();
    expect(sameRoute(route, { view: 'runs', compare: ['run-2', 'run-1'] })).toBe(false);
    const s = setRuns({ ...initialState(), loaded: true }, [lr3, lr4]);
    const opened = openRoute(s, route);
    expect(opened.kind).toBe('open');
    const state = opened.kind === 'open' ? opened.state : s;
    expect(state.runs.compare).toEqual(['run-1', 'run-2']);
    expect(state.runs.picked).toEqual(['run-1', 'run-2']);
    expect(routeOfState(state, null)).toEqual(route);
    expect(routeOfState(selectRun(state, 'run-1'), null)).toEqual({ view: 'runs', id: 'run-1' });
    expect(routeOfState(openCompare(state, null), null)).toEqual({ view: 'runs', id: state.runs.selectedId });
  });
});
