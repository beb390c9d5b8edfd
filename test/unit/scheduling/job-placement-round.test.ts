// The job round and runs: run members hold their whole GPUs (memberHoldings), and runs that want members are
// planned before pending jobs, their picks reserved — unless the run cannot reach min_workers, then nothing is.
import { describe, expect, it } from 'vitest';
import type { JobProgress } from '../../../src-shared/jobs/types';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import { currentHoldings, placementRound, type RoundInputs } from '../../../src-main/core/jobs/job-placement-round';
import type { JobRow } from '../../../src-main/core/state/job-rows';
import { runSnapshot, workerSnapshot } from '../helpers/snapshots';
import { declared, gpuConfig, spec } from './builders';

const GIB = 1024;

/** Nodes a, b, … each with `gpus` 24 GiB GPUs and 4 slots; worker ids 1, 2, … in that order. */
function cluster(names: string[], gpus = 1): Pick<RoundInputs, 'config' | 'workers'> {
  const nodes = names.map((n) => declared(n, Array.from({ length: gpus }, (_, k) => gpuConfig(`${n}-${k}`, 24 * GIB)), 4));
  const workers: WorkerSnapshot[] = nodes.map((n, i) =>
    workerSnapshot(i + 1, { node: n.name, backend: 'cuda', gpus: n.gpus.map((g) => ({ uuid: g.uuid, name: 'gpu', vramTotalMb: g.vram_mb })) }),
  );
  return { config: { nodes }, workers };
}

function row(id: string, over: Partial<JobRow> = {}): JobRow {
  return {
    id,
    seq: 1,
    name: id,
    spec: spec({ name: id, requireCuda: true, minVramGib: 1 }),
    status: 'pending',
    attempts: 0,
    maxAttempts: 3,
    claimId: null,
    node: null,
    workerId: null,
    gpuIndex: null,
    heldVramMb: 0,
    lastNode: null,
    reason: null,
    artifact: null,
    progress: null,
    peakVramMb: null,
    overBudget: false,
    inManifest: true,
    createdAt: 0,
    updatedAt: 0,
    claimedAt: null,
    heartbeatAt: null,
    startedAt: null,
    finishedAt: null,
    ...over,
  };
}

const running = (id: string, node: string, workerId: number, gpuIndex: number, progress: JobProgress | null = null): JobRow =>
  row(id, { status: 'running', node, workerId, gpuIndex, heldVramMb: 2 * GIB, claimId: 'c', attempts: 1, progress });

function gpuRun(over: Partial<RunSnapshot> & { name?: string; min?: number; max?: number; gpusPerMember?: number }): RunSnapshot {
  const { name = 'r2', min = 1, max = 4, gpusPerMember, ...rest } = over;
  const base = runSnapshot();
  return runSnapshot({
    spec: { ...base.spec, name, minWorkers: min, maxWorkers: max, useGpus: true, ...(gpusPerMember ? { placement: { gpusPerMember } } : {}) },
    ...rest,
  });
}

function round(c: Pick<RoundInputs, 'config' | 'workers'>, rows: JobRow[], runs: RunSnapshot[], extra: Partial<RoundInputs> = {}) {
  return placementRound({ ...c, gpuFree: new Map(), measured: new Map(), hosts: [], rows, runs, measuredPeak: () => null, policy: 'binpack', ...extra });
}

describe('currentHoldings', () => {
  it("counts a run member's whole GPUs from memberHoldings, and one slot per worker when a snapshot has none", () => {
    const c = cluster(['a', 'b']);
    const withGpus = gpuRun({ id: 'run-1', workerIds: [1], memberHoldings: [{ workerId: 1, node: 'a', gpuIndices: [0] }], progress: { step: 3, totalSteps: 9, loss: null, samplesPerSec: null, resumedFrom: null, at: 0 } });
    const old = runSnapshot({ id: 'run-0', workerIds: [2] });
    const holdings = currentHoldings([running('j', 'b', 2, 0, { step: 30, totalSteps: 60, loss: null })], [withGpus, old], c.workers, new Map());
    expect(holdings).toEqual([
      { node: 'b', kind: 'job', id: 'j', name: 'j', gpuIndex: 0, vramMb: 2 * GIB, measuredMb: null, detail: 'step 31 of 60' },
      { node: 'a', kind: 'run', id: 'run-1', name: 'r2', gpuIndex: null, gpuIndices: [0], vramMb: 0, detail: 'step 4 of 9' },
      { node: 'b', kind: 'run', id: 'run-0', name: 'example', gpuIndex: null, gpuIndices: [], vramMb: 0 },
    ]);
  });
});

describe('placementRound: runs before pending jobs', () => {
  it('never places a job on a GPU a running run member holds', () => {
    const c = cluster(['a'], 2);
    const run = gpuRun({ workerIds: [1], max: 1, gpusPerMember: 1, memberHoldings: [{ workerId: 1, node: 'a', gpuIndices: [0] }] });
    const r = round(c, [row('j1'), row('j2')], [run]);
    expect(r.placements.map((p) => [p.jobId, p.node, p.gpuIndex])).toEqual([['j1', 'a', 1], ['j2', 'a', 1]]);
  });

  it("reserves a waiting run's members before jobs are placed, and the job says which run holds the GPU", () => {
    const c = cluster(['a', 'b']);
    const run = gpuRun({ state: 'waiting', workerIds: [], min: 2 });
    const r = round(c, [row('j1')], [run]);
    expect(r.runPlans).toEqual([
      { runId: 'run-1', plan: { kind: 'plan', members: [{ workerId: 1, node: 'a', gpuIndices: [0] }, { workerId: 2, node: 'b', gpuIndices: [0] }], refused: [] } },
    ]);
    expect(r.placements).toEqual([]);
    expect(r.previews[0]!.verdicts.map((v) => v.reason)).toEqual(['a: GPU 0 held by run r2', 'b: GPU 0 held by run r2']);
    expect(r.holdings.filter((h) => h.kind === 'run').map((h) => [h.node, h.detail])).toEqual([['a', 'reserved'], ['b', 'reserved']]);
  });

  it('reserves the growth of a running run below max_workers', () => {
    const c = cluster(['a', 'b']);
    const run = gpuRun({ workerIds: [1], max: 2, memberHoldings: [{ workerId: 1, node: 'a', gpuIndices: [0] }] });
    expect(round(c, [row('j1')], [run]).placements).toEqual([]);
  });

  it('a run that cannot reach min_workers reserves nothing and never displaces a running job; it says what holds it', () => {
    const c = cluster(['a', 'b']);
    const run = gpuRun({ state: 'waiting', workerIds: [], min: 2 });
    const r = round(c, [running('r16-lr3e-3', 'a', 1, 0, { step: 30, totalSteps: 60, loss: null }), row('j1')], [run]);
    expect(r.runPlans[0]!.plan).toEqual({
      kind: 'hold',
      reason: 'waits for 1 more worker: a holds job r16-lr3e-3 (step 31 of 60)',
      nodes: [{ node: 'a', reason: 'a holds job r16-lr3e-3 (step 31 of 60)' }],
    });
    // Binpack puts it beside the running job: nothing was reserved for the run.
    expect(r.placements.map((p) => [p.jobId, p.node, p.gpuIndex])).toEqual([['j1', 'a', 0]]);
    expect(r.holdings.some((h) => h.kind === 'run')).toBe(false);
  });

  it('serves the oldest run first: a younger run does not get what the older one reserved', () => {
    const c = cluster(['a', 'b']);
    const older = gpuRun({ id: 'run-old', state: 'waiting', workerIds: [], min: 2, startedAt: 1 });
    const younger = gpuRun({ id: 'run-new', state: 'waiting', workerIds: [], min: 1, startedAt: 2 });
    const r = round(c, [], [younger, older]);
    expect(r.runPlans.map((p) => [p.runId, p.plan.kind])).toEqual([['run-old', 'plan'], ['run-new', 'hold']]);
  });

  it('reserves the free GPU of a machine another GPU run trains on for a second run (one run per GPU set): the job waits', () => {
    const c = cluster(['a'], 2);
    const r1 = gpuRun({ id: 'run-1', name: 'r1', workerIds: [1], max: 1, gpusPerMember: 1, memberHoldings: [{ workerId: 1, node: 'a', gpuIndices: [0] }] });
    const r2 = gpuRun({ id: 'run-2', state: 'waiting', workerIds: [], gpusPerMember: 1, startedAt: 2000 });
    const r = round(c, [row('j1')], [r1, r2]);
    expect(r.runPlans).toEqual([{ runId: 'run-2', plan: { kind: 'plan', members: [{ workerId: 1, node: 'a', gpuIndices: [1] }], refused: [] } }]);
    expect(r.placements).toEqual([]);
  });

  it('reserves nothing for a torchrun run on a machine without Python+torch', () => {
    const c = cluster(['a']);
    const run = gpuRun({ state: 'waiting', workerIds: [] });
    const r = round(c, [row('j1')], [run], { hasTorch: () => false });
    expect(r.runPlans[0]!.plan).toMatchObject({ kind: 'hold', reason: 'waits for 1 more worker: a has no Python with torch' });
    expect(r.placements.map((p) => p.jobId)).toEqual(['j1']);
  });
});
