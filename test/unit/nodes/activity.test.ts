import { describe, expect, it } from 'vitest';
import { nodeActivity, workerActivities } from '../../../src-shared/nodes/activity';
import { NOW, awaitingOf, jobOf, runOf, worker } from './activity-fixtures';

describe('workerActivities', () => {
  it('says which run each member is in and on which GPU, what job each machine runs with its step, and who is idle', () => {
    const workers = [worker({ id: 1, node: 'alpha' }), worker({ id: 2, node: 'beta' }), worker({ id: 3, node: 'gamma' })];
    const runs = [runOf({ workerIds: [1, 2], memberHoldings: [{ workerId: 1, node: 'alpha', gpuIndices: [0] }, { workerId: 2, node: 'beta', gpuIndices: [0] }] })];
    const text = workerActivities({ workers, runs, jobs: [jobOf()] }).map((a) => [a.node, a.state, a.text]);
    expect(text).toEqual([
      ['alpha', 'busy', 'member of run "r1" on GPU 0'],
      ['beta', 'busy', 'member of run "r1" on GPU 0; job "r16-lr3e-3" on GPU 1 (step 31 of 60)'],
      ['gamma', 'idle', 'idle'],
    ]);
  });

  it('tells two live runs apart, GPUs of several, a CPU member, and leaves ended runs and finished jobs out', () => {
    const workers = [worker({ id: 1, node: 'alpha' }), worker({ id: 2, node: 'beta' }), worker({ id: 3, node: 'cpu-box' })];
    const runs = [
      runOf({ id: 'run-1', spec: { ...runOf().spec, name: 'big' }, workerIds: [1], memberHoldings: [{ workerId: 1, node: 'alpha', gpuIndices: [0, 1] }] }),
      runOf({ id: 'run-2', spec: { ...runOf().spec, name: 'small' }, workerIds: [2, 3], memberHoldings: [{ workerId: 2, node: 'beta', gpuIndices: [1] }, { workerId: 3, node: 'cpu-box', gpuIndices: [] }] }),
      runOf({ id: 'run-0', state: 'finished', workerIds: [3], memberHoldings: [] }),
    ];
    const jobs = [jobOf({ workerId: 1, node: 'alpha', status: 'completed' }), jobOf({ id: 'j2', name: 'cpu-job', workerId: 3, node: 'cpu-box', gpuIndex: null, status: 'claimed', progress: null })];
    expect(workerActivities({ workers, runs, jobs }).map((a) => a.text)).toEqual([
      'member of run "big" on GPUs 0, 1',
      'member of run "small" on GPU 1',
      'member of run "small" on the CPU; job "cpu-job" on the CPU (starting)',
    ]);
  });

  it('falls back to workerIds without GPU facts when the coordinator sends no memberHoldings, and says a run is paused', () => {
    const workers = [worker({ id: 1 })];
    const [a] = workerActivities({ workers, runs: [runOf({ state: 'paused', workerIds: [1] })] });
    expect(a).toMatchObject({ state: 'busy', runs: [{ runId: 'run-1-aa', runName: 'r1', runState: 'paused', gpuIndices: null }], text: 'member of run "r1" (paused)' });
  });

  it('says offline for a failed or left worker even when a stale run still names it, and lists machines awaiting approval', () => {
    const workers = [worker({ id: 1, state: 'failed', stateCause: 'no heartbeat for 5 s' }), worker({ id: 2, node: 'beta', state: 'left' }), worker({ id: 3, node: 'gamma', state: 'draining' })];
    const runs = [runOf({ workerIds: [1, 3] })];
    const out = workerActivities({ workers, runs, awaiting: [awaitingOf()] });
    expect(out.map((a) => [a.workerId, a.node, a.state, a.text])).toEqual([
      [1, 'alpha', 'offline', 'offline'],
      [2, 'beta', 'offline', 'offline'],
      [3, 'gamma', 'draining', 'draining after: member of run "r1"'],
      [null, 'delta', 'awaiting-approval', 'awaiting approval'],
    ]);
  });

  it('shows a held-back key once: on the worker when it has one, as its own row otherwise', () => {
    const held = { fingerprint: `SHA256:${'b'.repeat(43)}`, since: NOW };
    const out = workerActivities({
      workers: [worker({ id: 1, node: 'alpha', keyHeldBack: held })],
      runs: [],
      awaiting: [awaitingOf({ node: 'alpha', heldBackFrom: `SHA256:${'c'.repeat(43)}` }), awaitingOf({ node: 'omega', heldBackFrom: `SHA256:${'c'.repeat(43)}` })],
    });
    expect(out.map((a) => [a.node, a.state])).toEqual([
      ['alpha', 'key-held-back'],
      ['omega', 'key-held-back'],
    ]);
  });
  it('names a job the ledger holds on the node even when it is not on the page of jobs at hand, once', () => {
    const ledger = [{ node: 'beta', workerId: 2, online: true, declared: true, slots: 2, slotsHeld: 2, cuda: true, gpus: [], holders: [
      { kind: 'job' as const, id: 'j1', name: 'r16-lr3e-3', gpuIndex: 1, vramMb: 4000 },
      { kind: 'job' as const, id: 'j9', name: 'far-down-the-queue', gpuIndex: 0, vramMb: 4000 },
    ] }];
    const [a] = workerActivities({ workers: [worker({ id: 2, node: 'beta' })], runs: [], jobs: [jobOf()], ledger });
    expect(a?.text).toBe('job "r16-lr3e-3" on GPU 1 (step 31 of 60); job "far-down-the-queue" on GPU 0');
  });
});

describe('nodeActivity', () => {
  it("is the node's liveliest worker: the rejoined one over the failed one; null for a node that never joined", () => {
    const workers = [worker({ id: 1, state: 'failed' }), worker({ id: 4, state: 'active' })];
    const all = workerActivities({ workers, runs: [runOf({ workerIds: [4] })] });
    expect(nodeActivity(all, 'alpha')).toMatchObject({ workerId: 4, text: 'member of run "r1"' });
    expect(nodeActivity(all, 'nowhere')).toBeNull();
  });
});
