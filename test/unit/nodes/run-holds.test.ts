// A node card says which live runs of a project hold its machine out, and why (issue 23 item 4): the member's own
// reason, matched by worker id (a card matched by GPU UUIDs) or else by node name; ready, fetching and ended runs
// hold nothing.
import { describe, expect, it } from 'vitest';
import { describeRunHold, runHolds } from '../../../src-shared/nodes/run-holds';
import type { RunProject, RunProjectMember, RunSnapshot } from '../../../src-shared/training';
import { runSnapshot } from '../helpers/snapshots';

const IMPORT = "python cannot import 'sentencepiece' (requirements.txt line 3)";

function project(members: RunProjectMember[]): RunProject {
  return { dir: '/home/me/proj', snapshot: 'a'.repeat(64), files: 3, bytes: 100, data: null, dataMode: 'replicate', modules: [], notes: [], members };
}

function run(id: string, members: RunProjectMember[], over: Partial<RunSnapshot> = {}): RunSnapshot {
  return runSnapshot({ id, spec: { ...runSnapshot().spec, name: `proj-${id}` }, state: 'waiting', project: project(members), ...over });
}

describe('runHolds', () => {
  const runs = [
    run('r1', [
      { workerId: 1, node: 'alpha', status: 'ready', detail: 'snapshot abc123… already here' },
      { workerId: 2, node: 'beta', status: 'failed', detail: IMPORT },
      { workerId: 3, node: 'gamma', status: 'fetching', detail: 'fetching the project: 1.0 of 4.0 MiB' },
    ]),
    run('r2', [{ workerId: 2, node: 'beta', status: 'failed', detail: 'not enough disk for the snapshot: 2.0 GiB needed, 300 MiB free' }], { state: 'running' }),
    run('r3', [{ workerId: 2, node: 'beta', status: 'failed', detail: 'an ended run holds nobody' }], { state: 'failed' }),
    runSnapshot({ id: 'r4' }),
  ];

  it('names every live run holding the machine out, with its reason, by worker id', () => {
    expect(runHolds(runs, { workerId: 2, node: 'whatever-it-is-called' })).toEqual([
      { runId: 'r1', runName: 'proj-r1', reason: IMPORT },
      { runId: 'r2', runName: 'proj-r2', reason: 'not enough disk for the snapshot: 2.0 GiB needed, 300 MiB free' },
    ]);
  });

  it('matches by node name when the card has no worker', () => {
    expect(runHolds(runs, { workerId: null, node: 'beta' }).map((h) => h.runId)).toEqual(['r1', 'r2']);
    expect(runHolds(runs, { workerId: undefined, node: 'alpha' })).toEqual([]);
  });

  it('holds nothing for a ready or fetching member, or another worker of the same name', () => {
    expect(runHolds(runs, { workerId: 1, node: 'alpha' })).toEqual([]);
    expect(runHolds(runs, { workerId: 3, node: 'gamma' })).toEqual([]);
    expect(runHolds(runs, { workerId: 9, node: 'beta' })).toEqual([]);
  });

  it('says it in a sentence, and never with an empty reason', () => {
    expect(describeRunHold({ runId: 'r1', runName: 'proj', reason: IMPORT })).toBe(`held out of run "proj": ${IMPORT}`);
    expect(runHolds([run('r5', [{ workerId: 4, node: 'delta', status: 'failed', detail: '' }])], { workerId: 4, node: 'delta' })[0]?.reason).toBe('could not prepare the project');
  });
});
