/** A deleted run leaves the page's list with its buffered output, and the page moves to another run. */
import { describe, expect, it } from 'vitest';
import * as R from '../../../src-renderer/features/runs/runs-slice';
import { initialState } from '../../../src-renderer/store/state';
import { runSnapshot } from '../helpers/snapshots';

describe('removeRun', () => {
  it('drops the run and its output; the selection moves to the newest remaining run, or to none', () => {
    let s = R.upsertRun(initialState(), runSnapshot({ id: 'run-1-aa', state: 'finished', startedAt: 1 }));
    s = R.upsertRun(s, runSnapshot({ id: 'run-2-bb', state: 'finished', startedAt: 2 }));
    s = R.selectRun(s, 'run-2-bb');
    s = R.replaceRunOutput(s, 'run-2-bb', 'hello\n');
    const after = R.removeRun(s, 'run-2-bb');
    expect(after.runs.list.map((r) => r.id)).toEqual(['run-1-aa']);
    expect(after.runs.output['run-2-bb']).toBeUndefined();
    expect(after.runs.selectedId).toBe('run-1-aa');
    expect(R.removeRun(R.selectRun(after, 'run-1-aa'), 'run-1-aa').runs).toMatchObject({ list: [], selectedId: null });
    expect(R.removeRun(after, 'run-9-zz').runs.selectedId).toBe('run-1-aa'); // another run's page stays
  });
});
