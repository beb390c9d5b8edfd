// Issue 25, housekeeping: an offline worker can be forgotten — its rows go from the list and from state.db, so it
// stays gone after a restart — while one online, or a member of a live run, is refused saying why and what to do.
import { describe, expect, it } from 'vitest';
import { forgetNode } from '../../../src-main/core/coordinator/membership/forget-node';
import type { ApiProblem } from '../../../src-main/core/coordinator/common/api-problem';
import { runSnapshot, workerSnapshot } from '../helpers/snapshots';
import { restartable } from './restartable';

const { dataDir, coordinatorOn } = restartable('gs-forget-');

function refusal(fn: () => unknown): { status: number; message: string } {
  try {
    fn();
  } catch (e) {
    return { status: (e as ApiProblem).status, message: (e as Error).message };
  }
  throw new Error('expected a refusal');
}

describe('forgetting a node', () => {
  it('refuses a node online or unknown; forgets an offline one for good, across a restart', () => {
    const dir = dataDir();
    const first = coordinatorOn(dir).h;
    const [alpha] = first.activeWorkers('alpha', 'beta');
    expect(refusal(() => first.svc.forgetNode('alpha'))).toEqual({ status: 409, message: expect.stringMatching(/^alpha is online \(worker \d+ is active\): only an offline worker can be forgotten; drain it first/) });
    expect(refusal(() => first.svc.forgetNode('gamma'))).toMatchObject({ status: 404 });
    first.run(10_000, [alpha!]); // beta falls silent: failed
    expect(first.svc.workers().find((w) => w.node === 'beta')?.state).toBe('failed');
    const left = first.svc.forgetNode('beta');
    expect(left.map((w) => w.node)).toEqual(['alpha']);
    expect(first.svc.events().at(-1)).toMatchObject({ kind: 'worker-forgotten', node: 'beta', message: expect.stringContaining('its key stays pinned') });
    first.svc.stop();

    const second = coordinatorOn(dir).h;
    expect(second.svc.workers().map((w) => w.node)).toEqual(['alpha']);
  });

  it('refuses a failed worker a live run still names, naming the run', () => {
    const w = workerSnapshot(3, { node: 'beta', state: 'failed' });
    const run = runSnapshot({ id: 'run-7', workerIds: [3], spec: { ...runSnapshot().spec, name: 'big' } });
    const forgotten: number[] = [];
    const deps = { pool: { snapshots: () => [w], forget: (id: number) => (forgotten.push(id), true) }, runs: { memberIds: () => new Set([3]), runs: () => [run] }, messages: { event: () => undefined } };
    expect(refusal(() => forgetNode(deps, 'beta'))).toEqual({ status: 409, message: 'beta (worker 3) is still a member of live run "big" (run-7): stop the run, or wait until it relaunches without it, then forget it' });
    expect(forgotten).toEqual([]);
  });
});
