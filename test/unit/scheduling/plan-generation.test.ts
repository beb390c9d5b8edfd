// planMembers: which workers make up a run's next generation and which whole GPUs each holds, or why the run
// waits, named per node in the issue's words; and the shared ledger, in which jobs never take a run member's GPU.
import { describe, expect, it } from 'vitest';
import type { NodeCapacity } from '../../../src-shared/scheduling/capacity';
import type { Holding } from '../../../src-shared/scheduling/holdings';
import { buildLedger } from '../../../src-shared/scheduling/ledger';
import { placeJobs } from '../../../src-shared/scheduling/place-jobs';
import { planMembers, runHoldings, type RunCandidate, type RunPlanRequest } from '../../../src-shared/scheduling/plan-generation';
import { runDemand, type RunDemand } from '../../../src-shared/scheduling/run-demand';
import type { RunSpec } from '../../../src-shared/training';
import { job } from './builders';

let ids = 0;
/** A node whose active worker has GPUs with these usable reserves (MB) and this many adapter slots. */
function cap(node: string, usableMb: number[], slots = 4): NodeCapacity {
  return {
    node,
    workerId: ++ids,
    online: true,
    state: 'active',
    declared: true,
    slots,
    cuda: usableMb.length > 0,
    cpuCores: 16,
    ramMb: 65536,
    gpus: usableMb.map((mb, index) => ({ index, uuid: `${node}-${index}`, name: 'gpu', memoryType: 'discrete', totalMb: mb, usableMb: mb, freeMb: null })),
    policy: null,
  };
}

const candidate = (n: NodeCapacity, extra: Partial<RunCandidate> = {}): RunCandidate => ({ workerId: n.workerId!, node: n.node, hasTorch: true, joinSeq: n.workerId!, ...extra });

function demand(extra: Partial<RunDemand> = {}): RunDemand {
  return { minWorkers: 1, maxWorkers: 4, needsTorch: true, requireCuda: true, minVramGib: 0, allowedHosts: null, gpusPerMember: 'all', ...extra };
}

function request(extra: Partial<RunDemand> = {}, currentMembers: number[] = [], runId = 'run-2'): RunPlanRequest {
  return { runId, name: runId === 'run-2' ? 'r2' : runId, demand: demand(extra), currentMembers };
}

const jobHolding = (node: string, id: string, gpuIndex: number | null, vramMb: number, detail?: string): Holding => ({
  node,
  kind: 'job',
  id,
  name: id,
  gpuIndex,
  vramMb,
  ...(detail ? { detail } : {}),
});

function holdReason(plan: ReturnType<typeof planMembers>): string {
  if (plan.kind !== 'hold') throw new Error(`expected a hold, got ${JSON.stringify(plan)}`);
  return plan.reason;
}

describe('runDemand', () => {
  const base: RunSpec = {
    name: 'r1', command: ['train.py'], samples: 100, minWorkers: 2, maxWorkers: 3, heartbeatTimeoutMs: 5000, maxRestarts: 3,
    nprocPerNode: 1, useGpus: false, launcher: 'torchrun', env: {},
  };

  it('reads a CPU run as no GPUs per member and no CUDA needed', () => {
    expect(runDemand(base)).toEqual({ minWorkers: 2, maxWorkers: 3, needsTorch: true, requireCuda: false, minVramGib: 0, allowedHosts: null, gpusPerMember: 0 });
  });

  it("reads a GPU run's placement: GPUs per member (all when left out), VRAM, hosts; the direct launcher needs no torch", () => {
    expect(runDemand({ ...base, useGpus: true, launcher: 'direct' })).toMatchObject({ needsTorch: false, requireCuda: true, gpusPerMember: 'all' });
    expect(runDemand({ ...base, useGpus: true, placement: { gpusPerMember: 2, minVramGib: 12, allowedHosts: ['a'] } })).toMatchObject({
      gpusPerMember: 2,
      minVramGib: 12,
      allowedHosts: ['a'],
    });
    expect(runDemand({ ...base, placement: { requireCuda: true } })).toMatchObject({ requireCuda: true, gpusPerMember: 0 });
  });
});

describe('planMembers reasons', () => {
  it('waits for 1 more worker: beta holds job r16-lr3e-3 (step 30 of 60)', () => {
    const alpha = cap('alpha', [20000]);
    const beta = cap('beta', [20000], 1);
    const holdings = [jobHolding('beta', 'r16-lr3e-3', 0, 8000, 'step 30 of 60')];
    const plan = planMembers(request({ minWorkers: 2 }), [candidate(alpha), candidate(beta)], { nodes: [alpha, beta], holdings });
    expect(holdReason(plan)).toBe('waits for 1 more worker: beta holds job r16-lr3e-3 (step 30 of 60)');
    expect(plan).toMatchObject({ nodes: [{ node: 'beta', reason: 'beta holds job r16-lr3e-3 (step 30 of 60)' }] });
  });

  it('names a job on the GPU a member would need even when the node has a slot free', () => {
    const beta = cap('beta', [20000], 4);
    const plan = planMembers(request(), [candidate(beta)], { nodes: [beta], holdings: [jobHolding('beta', 'r16', 0, 100, 'step 3 of 6')] });
    expect(holdReason(plan)).toBe('waits for 1 more worker: beta holds job r16 (step 3 of 6)');
  });

  it.each([
    ['gamma has no CUDA GPU (require_cuda)', cap('gamma', []), demand({ requireCuda: true }), {}],
    ['delta is not in allowed_hosts', cap('delta', [20000]), demand({ allowedHosts: ['alpha'] }), {}],
    ['eps has no Python with torch', cap('eps', [20000]), demand(), { hasTorch: false }],
    ['zeta: GPU 0 holds 7.9 GiB usable, run needs 12 GiB', cap('zeta', [8090]), demand({ minVramGib: 12 }), {}],
    ['eta has 1 GPU, run needs 2 per member', cap('eta', [20000]), demand({ gpusPerMember: 2 }), {}],
  ])('%s', (text, node, d, extra) => {
    const plan = planMembers({ runId: 'run-2', name: 'r2', demand: d, currentMembers: [] }, [candidate(node, extra)], { nodes: [node], holdings: [] });
    expect(holdReason(plan)).toBe(`waits for 1 more worker: ${text}`);
  });

  it('theta: all 2 GPUs held by run r1', () => {
    const theta = cap('theta', [20000, 20000]);
    const holdings = runHoldings('run-1', 'r1', [{ workerId: theta.workerId!, node: 'theta', gpuIndices: [0, 1] }]);
    const plan = planMembers(request({ gpusPerMember: 1 }), [candidate(theta)], { nodes: [theta], holdings });
    expect(holdReason(plan)).toBe('waits for 1 more worker: theta: all 2 GPUs held by run r1');
  });

  it('a CPU run takes a machine no other run uses, and a GPU run keeps off a CPU-run member', () => {
    const iota = cap('iota', [20000]);
    const gpuRun = runHoldings('run-1', 'r1', [{ workerId: iota.workerId!, node: 'iota', gpuIndices: [0] }]);
    const cpu = planMembers(request({ requireCuda: false, gpusPerMember: 0 }), [candidate(iota)], { nodes: [iota], holdings: gpuRun });
    expect(holdReason(cpu)).toBe('waits for 1 more worker: iota is a member of run r1 (a CPU run takes a machine no other run uses)');
    const cpuRun = runHoldings('run-1', 'r1', [{ workerId: iota.workerId!, node: 'iota', gpuIndices: [] }]);
    const gpu = planMembers(request(), [candidate(iota)], { nodes: [iota], holdings: cpuRun });
    expect(holdReason(gpu)).toBe('waits for 1 more worker: iota is a member of CPU run r1');
  });

  it('places a worker that joined as "vm" under the declared node whose GPUs it has ("desktop"), for runs and the job round alike', () => {
    const desktop = cap('desktop', [8000, 8000]);
    const vm = candidate(desktop, { node: 'vm' });
    const plan = planMembers(request({ gpusPerMember: 1, allowedHosts: ['desktop'] }), [vm], { nodes: [desktop], holdings: [] });
    expect(plan).toMatchObject({ kind: 'plan', members: [{ workerId: desktop.workerId, node: 'desktop', gpuIndices: [0] }] });
    // Its holdings count against the declared node: a job on GPU 0 and run r1 on GPU 1 leave nothing.
    const held = [jobHolding('desktop', 'j1', 0, 8000), ...runHoldings('run-1', 'r1', [{ workerId: desktop.workerId!, node: 'desktop', gpuIndices: [1] }])];
    expect(holdReason(planMembers(request({ gpusPerMember: 1 }), [vm], { nodes: [desktop], holdings: held }))).toBe('waits for 1 more worker: desktop holds job j1 and run r1');
  });

  it('says how many workers it waits for when no one else is active', () => {
    const alpha = cap('alpha', [20000]);
    expect(holdReason(planMembers(request({ minWorkers: 3 }), [candidate(alpha)], { nodes: [alpha], holdings: [] }))).toBe(
      'waits for 2 more workers: no other worker is active',
    );
  });

  it('quotes at most 8 node reasons in its sentence and counts the rest; every one stays in nodes', () => {
    const nodes = Array.from({ length: 11 }, (_, i) => cap(`h${i}`, []));
    const plan = planMembers(request(), nodes.map((n) => candidate(n)), { nodes, holdings: [] });
    expect(holdReason(plan)).toBe(`waits for 1 more worker: ${nodes.slice(0, 8).map((n) => `${n.node} has no CUDA GPU (require_cuda)`).join('; ')}; and 3 more nodes`);
    expect(plan.kind === 'hold' && plan.nodes).toHaveLength(11);
  });
});

describe('planMembers plans', () => {
  it('gives each member whole free GPUs, lowest index first, and stops at max_workers in join order', () => {
    const a = cap('a', [20000, 20000]);
    const b = cap('b', [20000]);
    const c = cap('c', [20000]);
    const holdings = [jobHolding('a', 'j', 0, 100)];
    const plan = planMembers(request({ gpusPerMember: 1, maxWorkers: 2 }), [candidate(c), candidate(b), candidate(a)], { nodes: [a, b, c], holdings });
    expect(plan).toEqual({
      kind: 'plan',
      members: [
        { workerId: a.workerId, node: 'a', gpuIndices: [1] },
        { workerId: b.workerId, node: 'b', gpuIndices: [0] },
      ],
      refused: [],
    });
  });

  it('keeps current members first: a run is not reshuffled when an earlier-joined worker becomes free', () => {
    const a = cap('a', [20000]);
    const b = cap('b', [20000]);
    const c = cap('c', [20000]);
    const mine = runHoldings('run-2', 'r2', [{ workerId: c.workerId!, node: 'c', gpuIndices: [0] }]);
    const plan = planMembers(request({ maxWorkers: 2 }, [c.workerId!]), [candidate(a), candidate(b), candidate(c)], { nodes: [a, b, c], holdings: mine });
    expect(plan.kind === 'plan' && plan.members.map((m) => m.node)).toEqual(['c', 'a']);
  });

  it("lets two GPU runs share a machine on different GPUs, and ignores the run's own holdings", () => {
    const a = cap('a', [20000, 20000]);
    const holdings = [
      ...runHoldings('run-1', 'r1', [{ workerId: a.workerId!, node: 'a', gpuIndices: [0] }]),
      ...runHoldings('run-2', 'r2', [{ workerId: a.workerId!, node: 'a', gpuIndices: [1] }]),
    ];
    const plan = planMembers(request({ gpusPerMember: 1 }, [a.workerId!]), [candidate(a)], { nodes: [a], holdings });
    expect(plan).toMatchObject({ kind: 'plan', members: [{ node: 'a', gpuIndices: [1] }] });
  });

  it('puts one member of a run per machine', () => {
    const a = cap('a', [20000, 20000]);
    const plan = planMembers(request({ gpusPerMember: 1, minWorkers: 2 }), [candidate(a), candidate(a, { workerId: 99, joinSeq: 99 })], {
      nodes: [a],
      holdings: [],
    });
    expect(holdReason(plan)).toBe(`waits for 1 more worker: a already has a member of this run (worker ${a.workerId})`);
  });
});

describe('jobs and run members in one ledger', () => {
  it('never places a job on a GPU a run member holds, even one that asks for no VRAM, and says which run holds it', () => {
    const a = cap('a', [20000, 20000]);
    const holdings = runHoldings('run-1', 'r1', [{ workerId: a.workerId!, node: 'a', gpuIndices: [0, 1] }]);
    const { placements, previews } = placeJobs([job('j', { requireCuda: true, minVramGib: 0 })], [a], holdings);
    expect(placements).toEqual([]);
    expect(previews[0]!.verdicts).toEqual([{ node: 'a', ok: false, reason: 'a: all 2 GPUs held by run r1' }]);
  });

  it('places a job on the GPU a run member leaves free, and counts the member in the slots', () => {
    const a = cap('a', [20000, 20000], 2);
    const holdings = runHoldings('run-1', 'r1', [{ workerId: a.workerId!, node: 'a', gpuIndices: [0] }]);
    const { placements } = placeJobs([job('j1', { requireCuda: true, minVramGib: 1 }), job('j2', { requireCuda: true, minVramGib: 1 })], [a], holdings);
    expect(placements.map((p) => [p.jobId, p.gpuIndex])).toEqual([['j1', 1]]);
  });

  it("the ledger shows a run member's GPUs fully held and its GPUs and detail on the holder", () => {
    const a = cap('a', [20000, 16000]);
    const holdings = runHoldings('run-1', 'r1', [{ workerId: a.workerId!, node: 'a', gpuIndices: [1] }], 'step 30 of 60');
    const [ledger] = buildLedger([a], holdings);
    expect(ledger!.slotsHeld).toBe(1);
    expect(ledger!.gpus.map((g) => g.heldMb)).toEqual([0, 16000]);
    expect(ledger!.holders).toEqual([{ kind: 'run', id: 'run-1', name: 'r1', gpuIndex: null, gpuIndices: [1], vramMb: 0, detail: 'step 30 of 60' }]);
  });

});
