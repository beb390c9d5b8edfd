// The runs slice and its commands: several live runs listed apart from the history, each row's members, step of
// total and restarts, a run's members with their GPUs (or only names before member holdings), the run that opens
// by default, starting a run while another is live, and what each machine is doing on the page.
import { describe, expect, it } from 'vitest';
import type { GpuShareApi } from '../../../src-shared/ipc';
import type { RunSnapshot } from '../../../src-shared/training';
import { activitiesOf, cardActivity } from '../../../src-renderer/features/workers/activity';
import { createAppStore } from '../../../src-renderer/store/app-store';
import { createRunCommands } from '../../../src-renderer/features/runs/run-commands';
import { memberLabel, runListLine, runMembers, selectedRun, setRuns, splitRuns, upsertRun } from '../../../src-renderer/features/runs/runs-slice';
import { initialState } from '../../../src-renderer/store/state';
import { runSnapshot, workerSnapshot } from '../helpers/snapshots';

const spec = runSnapshot().spec;

function run(id: string, startedAt: number, over: Partial<RunSnapshot> = {}): RunSnapshot {
  return runSnapshot({ id, spec: { ...spec, name: id }, startedAt, ...over });
}

const big = run('big', 10, { workerIds: [1, 2], memberHoldings: [{ workerId: 1, node: 'alpha', gpuIndices: [0] }, { workerId: 2, node: 'beta', gpuIndices: [0, 1] }], progress: { step: 39, totalSteps: 400, loss: 1, samplesPerSec: 1, resumedFrom: null, at: 0 } });
const small = run('small', 20, { workerIds: [3], memberHoldings: [{ workerId: 3, node: 'gamma', gpuIndices: [] }], restartsUsed: 1 });
const ended = run('ended', 30, { state: 'finished', endedAt: 40, workerIds: [] });

describe('the runs slice', () => {
  it('lists live runs apart from the history, and opens the newest live run rather than a newer ended one', () => {
    const s = setRuns(initialState(), [big, ended, small]);
    expect(s.runs.list.map((r) => r.id)).toEqual(['ended', 'small', 'big']);
    const { live, history } = splitRuns(s.runs.list);
    expect([live.map((r) => r.id), history.map((r) => r.id)]).toEqual([['small', 'big'], ['ended']]);
    expect(selectedRun(s)?.id).toBe('small');
  });

  it("says each run's own members with their GPUs, and only names (from its worker rows) before member holdings", () => {
    expect(runMembers(big).map(memberLabel)).toEqual(['alpha (GPU 0)', 'beta (GPUs 0, 1)']);
    expect(runMembers(small).map(memberLabel)).toEqual(['gamma (CPU)']);
    const old = run('old', 1, { workerIds: [4, 5], workerRows: [{ workerId: 4, node: 'delta', member: true, step: null, loss: null, samplesPerSec: null, restartsCaused: 0 }] });
    expect(runMembers(old, [workerSnapshot(5, { node: 'eps' })]).map(memberLabel)).toEqual(['delta', 'eps']);
  });

  it('gives each row its members, step of total and restarts; an ended run no members', () => {
    expect(runListLine(big)).toBe('alpha, beta · step 40 of 400 · 0 restarts');
    expect(runListLine(small)).toBe('gamma · 1 restart');
    expect(runListLine(run('w', 1, { state: 'waiting', workerIds: [] }))).toBe('no member yet · 0 restarts');
    expect(runListLine(ended)).toBe('0 restarts');
  });
});

describe('run commands', () => {
  it('starts a second run while one is live: both listed, the new one opened', async () => {
    const store = createAppStore(setRuns(initialState(), [big]));
    const asked: unknown[] = [];
    const api = { startRun: async (s: unknown) => (asked.push(s), small) } as unknown as GpuShareApi;
    expect(await createRunCommands(api, store).startRun({ ...spec, command: ['train.py'] })).toBe(true);
    expect(asked).toHaveLength(1);
    const s = store.getState();
    expect(s.runs.list.map((r) => r.id)).toEqual(['small', 'big']);
    expect(s.runs.selectedId).toBe('small');
    expect(s.busy).toEqual([]);
  });

  it('a refused start becomes the banner and changes no run', async () => {
    const store = createAppStore(setRuns(initialState(), [big]));
    const api = { startRun: async () => Promise.reject(new Error('the spec names no command')) } as unknown as GpuShareApi;
    expect(await createRunCommands(api, store).startRun({ ...spec })).toBe(false);
    expect(store.getState().actionError).toBe('Could not start the run: the spec names no command');
    expect(store.getState().runs.list.map((r) => r.id)).toEqual(['big']);
  });

  it('stops one run and leaves the other live', async () => {
    const store = createAppStore(setRuns(initialState(), [big, small]));
    const api = { stopRun: async ({ runId }: { runId: string }) => ({ ...(runId === 'big' ? big : small), state: 'stopped' }) } as unknown as GpuShareApi;
    await createRunCommands(api, store).stopRun('big');
    expect(store.getState().runs.list.map((r) => [r.id, r.state])).toEqual([
      ['small', 'running'],
      ['big', 'stopped'],
    ]);
  });
});

describe('what each machine is doing, on the page', () => {
  it('reads the run list of the slice, the jobs page and the machines awaiting approval', () => {
    let s = upsertRun(setRuns(initialState(), [big]), small);
    s = { ...s, workers: [workerSnapshot(1, { node: 'alpha' }), workerSnapshot(3, { node: 'gamma' }), workerSnapshot(6, { node: 'zeta' })] };
    s = { ...s, awaiting: [{ node: 'omega', fingerprint: 'SHA256:x', address: null, hardware: { gpus: [], cpuCores: 4, ramMb: 4096, torch: null }, firstSeen: 0, lastSeen: 0 }] };
    expect(activitiesOf(s).map((a) => [a.node, a.text])).toEqual([
      ['alpha', 'member of run "big" on GPU 0'],
      ['gamma', 'member of run "small" on the CPU'],
      ['zeta', 'idle'],
      ['omega', 'awaiting approval'],
    ]);
  });

  it("gives a node card its matched worker's activity even when that worker joined under another name", () => {
    const s = { ...setRuns(initialState(), [big]), workers: [workerSnapshot(1, { node: 'host-1234' })] };
    const all = activitiesOf(s);
    expect(cardActivity(all, 'workstation', 1)?.text).toBe('member of run "big" on GPU 0');
    expect(cardActivity(all, 'workstation', null)).toBeNull();
  });
});
