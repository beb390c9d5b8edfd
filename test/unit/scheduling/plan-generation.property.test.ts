// Random clusters (0–4 GPUs and 1–6 slots per node, jobs holding slots and VRAM) and 1–3 runs planned in turn,
// each plan's members held before the next is planned: no GPU in two runs, no run member on a GPU a job holds,
// no node over its slots, a CPU-run member alone among runs on its machine, every member within its run's
// constraints, min..max members or a hold whose reason names a node, and plans stable when a worker joins.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NodeCapacity } from '../../../src-shared/scheduling/capacity';
import { MB_PER_GIB } from '../../../src-shared/scheduling/demand';
import { gpuRemainingMb, heldGpuIndices, tallyHoldings, type Holding } from '../../../src-shared/scheduling/holdings';
import { planMembers, runHoldings, type MemberPlan, type RunCandidate, type RunPlanRequest } from '../../../src-shared/scheduling/plan-generation';
import { placeJobs } from '../../../src-shared/scheduling/place-jobs';
import type { RunDemand } from '../../../src-shared/scheduling/run-demand';
import { reserveForRuns, RESERVED } from '../../../src-shared/scheduling/schedule-round';
import { job } from './builders';

const nodeArb = fc.record({
  gpus: fc.array(fc.record({ usableGib: fc.integer({ min: 2, max: 48 }), freeGib: fc.option(fc.integer({ min: 0, max: 48 })) }), { maxLength: 4 }),
  slots: fc.integer({ min: 1, max: 6 }),
  online: fc.integer({ min: 0, max: 19 }).map((x) => x >= 3),
  hasTorch: fc.integer({ min: 0, max: 9 }).map((x) => x >= 2),
  /** Jobs on this node: each a GPU position (taken modulo the node's GPUs; null = CPU) and the VRAM it holds. */
  jobs: fc.array(fc.record({ gpu: fc.option(fc.nat({ max: 3 })), gib: fc.integer({ min: 0, max: 20 }) }), { maxLength: 4 }),
});

const runArb = fc.record({
  min: fc.constantFrom(1, 1, 2, 3),
  extra: fc.nat({ max: 3 }),
  needsTorch: fc.boolean(),
  requireCuda: fc.boolean(),
  gpusPerMember: fc.constantFrom<RunDemand['gpusPerMember']>(0, 0, 1, 1, 2, 'all'),
  minVramGib: fc.constantFrom(0, 0, 8, 16, 30),
  allowed: fc.option(fc.array(fc.nat({ max: 6 }), { minLength: 1, maxLength: 5 }), { freq: 2 }),
});

type NodeIn = typeof nodeArb extends fc.Arbitrary<infer T> ? T : never;
type RunIn = typeof runArb extends fc.Arbitrary<infer T> ? T : never;

function build(nodesIn: NodeIn[]): { nodes: NodeCapacity[]; jobs: Holding[]; candidates: RunCandidate[] } {
  const nodes: NodeCapacity[] = nodesIn.map((n, i) => ({
    node: `n${i}`,
    workerId: i + 1,
    online: n.online,
    state: n.online ? 'active' : 'draining',
    declared: true,
    slots: n.slots,
    cuda: n.gpus.length > 0,
    cpuCores: 8,
    ramMb: 16384,
    gpus: n.gpus.map((g, index) => ({
      index,
      uuid: `GPU-${i}-${index}`,
      name: 'gpu',
      memoryType: 'discrete',
      totalMb: g.usableGib * MB_PER_GIB,
      usableMb: g.usableGib * MB_PER_GIB,
      freeMb: g.freeGib === null ? null : g.freeGib * MB_PER_GIB,
    })),
    policy: null,
  }));
  const jobs: Holding[] = [];
  nodesIn.forEach((n, i) => {
    n.jobs.slice(0, n.slots).forEach((j, k) => {
      const gpuIndex = j.gpu === null || n.gpus.length === 0 ? null : j.gpu % n.gpus.length;
      jobs.push({ node: `n${i}`, kind: 'job', id: `job-${i}-${k}`, name: `job-${i}-${k}`, gpuIndex, vramMb: gpuIndex === null ? 0 : j.gib * MB_PER_GIB });
    });
  });
  // Active workers only, as the caller filters; join order is not node order.
  const candidates = nodesIn.flatMap((n, i) => (n.online ? [{ workerId: i + 1, node: `n${i}`, hasTorch: n.hasTorch, joinSeq: (i * 7) % 11 }] : []));
  return { nodes, jobs, candidates };
}

function request(r: RunIn, k: number, nodeCount: number): RunPlanRequest {
  const demand: RunDemand = {
    minWorkers: r.min,
    maxWorkers: r.min + r.extra,
    needsTorch: r.needsTorch,
    requireCuda: r.requireCuda || r.gpusPerMember !== 0,
    minVramGib: r.gpusPerMember === 0 ? 0 : r.minVramGib,
    allowedHosts: r.allowed === null ? null : r.allowed.map((a) => `n${a % nodeCount}`),
    gpusPerMember: r.gpusPerMember,
  };
  return { runId: `run-${k}`, name: `r${k}`, demand, currentMembers: [] };
}

/** Plans the runs in turn, each plan's members held before the next; returns the plans and every holding. */
function planAll(nodes: NodeCapacity[], jobs: Holding[], candidates: RunCandidate[], runs: RunPlanRequest[]) {
  const holdings = [...jobs];
  const plans: MemberPlan[] = [];
  for (const run of runs) {
    const before = [...holdings];
    const plan = planMembers(run, candidates, { nodes, holdings: before });
    plans.push(plan);
    if (plan.kind === 'plan') holdings.push(...runHoldings(run.runId, run.name, plan.members));
    checkPlan(run, plan, nodes, before, candidates);
  }
  return { plans, holdings };
}

function checkPlan(run: RunPlanRequest, plan: MemberPlan, nodes: NodeCapacity[], before: Holding[], candidates: RunCandidate[]): void {
  const { demand } = run;
  if (plan.kind === 'hold') {
    expect(plan.reason).toMatch(/^waits for \d+ more workers?: ./);
    for (const n of plan.nodes) expect(n.reason.startsWith(n.node)).toBe(true);
    if (plan.nodes.length > 0) expect(plan.nodes.some((n) => plan.reason.includes(n.reason))).toBe(true);
    else expect(plan.reason).toMatch(/no (other )?worker is active/);
    return;
  }
  expect(plan.members.length).toBeGreaterThanOrEqual(demand.minWorkers);
  expect(plan.members.length).toBeLessThanOrEqual(demand.maxWorkers);
  expect(new Set(plan.members.map((m) => m.node)).size).toBe(plan.members.length);
  const usage = tallyHoldings(nodes, before);
  for (const m of plan.members) {
    const at = nodes.findIndex((n) => n.node === m.node);
    const node = nodes[at]!;
    const cand = candidates.find((c) => c.workerId === m.workerId)!;
    expect(node.online).toBe(true);
    if (demand.allowedHosts !== null) expect(demand.allowedHosts).toContain(m.node);
    if (demand.needsTorch) expect(cand.hasTorch).toBe(true);
    if (demand.requireCuda) expect(node.gpus.length).toBeGreaterThan(0);
    const need = demand.gpusPerMember === 'all' ? node.gpus.length : demand.gpusPerMember;
    expect(m.gpuIndices.length).toBe(need);
    for (const index of m.gpuIndices) {
      const g = node.gpus.findIndex((gpu) => gpu.index === index);
      expect(usage[at]!.gpus[g]!.holders).toEqual([]);
      expect(gpuRemainingMb(node.gpus[g]!, usage[at]!.gpus[g]!)).toBeGreaterThanOrEqual(demand.minVramGib * MB_PER_GIB);
    }
  }
}

describe('planMembers over random clusters', () => {
  it('never puts a GPU in two runs, a member on a job’s GPU or a node over its slots; min..max or a hold that names a node', () => {
    fc.assert(
      fc.property(fc.array(nodeArb, { minLength: 1, maxLength: 7 }), fc.array(runArb, { minLength: 1, maxLength: 3 }), (nodesIn, runsIn) => {
        const { nodes, jobs, candidates } = build(nodesIn);
        const runs = runsIn.map((r, k) => request(r, k, nodes.length));
        const { holdings } = planAll(nodes, jobs, candidates, runs);

        const usage = tallyHoldings(nodes, holdings);
        nodes.forEach((node, i) => expect(usage[i]!.slotsHeld).toBeLessThanOrEqual(node.slots));
        const gpuOwner = new Map<string, Holding[]>();
        for (const h of holdings) {
          for (const index of heldGpuIndices(h)) {
            const key = `${h.node}/${index}`;
            gpuOwner.set(key, [...(gpuOwner.get(key) ?? []), h]);
          }
        }
        for (const held of gpuOwner.values()) {
          const runsOn = held.filter((h) => h.kind === 'run');
          // A GPU a run member holds is held by that member alone: no second run, no job.
          if (runsOn.length > 0) expect(held).toHaveLength(1);
        }
        for (const node of nodes) {
          const members = holdings.filter((h) => h.kind === 'run' && h.node === node.node);
          if (members.some((h) => heldGpuIndices(h).length === 0)) expect(members).toHaveLength(1);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps current members when an earlier-joined worker appears: a run is not reshuffled', () => {
    fc.assert(
      fc.property(fc.array(nodeArb, { minLength: 2, maxLength: 7 }), fc.array(runArb, { minLength: 1, maxLength: 3 }), (nodesIn, runsIn) => {
        // The last node's worker joins late (before anyone else in join order) after every run was planned.
        const { nodes, jobs, candidates } = build(nodesIn);
        const late = candidates.find((c) => c.node === `n${nodes.length - 1}`);
        const early = candidates.filter((c) => c !== late);
        const runs = runsIn.map((r, k) => request(r, k, nodes.length));
        const { plans, holdings } = planAll(nodes, jobs, early, runs);
        const withLate = late ? [{ ...late, joinSeq: -1 }, ...early] : early;
        runs.forEach((run, k) => {
          const first = plans[k]!;
          if (first.kind !== 'plan') return;
          const again = planMembers({ ...run, currentMembers: first.members.map((m) => m.workerId) }, withLate, { nodes, holdings });
          expect(again.kind).toBe('plan');
          if (again.kind === 'plan') expect(again.members.slice(0, first.members.length)).toEqual(first.members);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('jobs placed after the runs never take a run member’s GPU nor a slot beyond capacity', () => {
    const pendingArb = fc.array(fc.record({ requireCuda: fc.boolean(), preferCuda: fc.boolean(), minVramGib: fc.constantFrom(0, 0, 1, 4, 12) }), { maxLength: 12 });
    fc.assert(
      fc.property(fc.array(nodeArb, { minLength: 1, maxLength: 6 }), fc.array(runArb, { minLength: 1, maxLength: 3 }), pendingArb, (nodesIn, runsIn, pendingIn) => {
        const { nodes, jobs, candidates } = build(nodesIn);
        const { holdings } = planAll(nodes, jobs, candidates, runsIn.map((r, k) => request(r, k, nodes.length)));
        const pending = pendingIn.map((p, i) => job(`p${i}`, p));
        const { placements } = placeJobs(pending, nodes, holdings);
        const runGpus = new Set(holdings.filter((h) => h.kind === 'run').flatMap((h) => heldGpuIndices(h).map((g) => `${h.node}/${g}`)));
        for (const p of placements) if (p.gpuIndex !== null) expect(runGpus.has(`${p.node}/${p.gpuIndex}`)).toBe(false);
        const placed: Holding[] = placements.map((p) => ({ node: p.node, kind: 'job', id: p.jobId, name: p.jobId, gpuIndex: p.gpuIndex, vramMb: p.vramMb }));
        const usage = tallyHoldings(nodes, [...holdings, ...placed]);
        nodes.forEach((node, i) => expect(usage[i]!.slotsHeld).toBeLessThanOrEqual(node.slots));
      }),
      { numRuns: 200 },
    );
  });

  it('reserveForRuns reserves exactly the new members of each plan and nothing for a run that holds', () => {
    fc.assert(
      fc.property(fc.array(nodeArb, { minLength: 1, maxLength: 6 }), fc.array(runArb, { minLength: 1, maxLength: 3 }), (nodesIn, runsIn) => {
        const { nodes, jobs, candidates } = build(nodesIn);
        const runs = runsIn.map((r, k) => request(r, k, nodes.length));
        const { holdings, plans } = reserveForRuns(runs, candidates, { nodes, holdings: jobs });
        expect(holdings.slice(0, jobs.length)).toEqual(jobs);
        const reserved = holdings.slice(jobs.length);
        for (const h of reserved) expect(h).toMatchObject({ kind: 'run', detail: RESERVED });
        plans.forEach(({ runId, plan }) => {
          const mine = reserved.filter((h) => h.id === runId).map((h) => [h.node, heldGpuIndices(h)]);
          expect(mine).toEqual(plan.kind === 'plan' ? plan.members.map((m) => [m.node, m.gpuIndices]) : []);
        });
        const usage = tallyHoldings(nodes, holdings);
        nodes.forEach((node, i) => {
          expect(usage[i]!.slotsHeld).toBeLessThanOrEqual(node.slots);
          // Several runs on one machine only on disjoint GPUs; a CPU run (no GPU held) has its machine alone.
          const runs = usage[i]!.holders.filter((h) => h.kind === 'run');
          const owner = new Map<number, string>();
          for (const h of runs) for (const g of heldGpuIndices(h)) expect(owner.set(g, owner.get(g) ?? h.id).get(g)).toBe(h.id);
          if (runs.some((h) => heldGpuIndices(h).length === 0)) expect(new Set(runs.map((h) => h.id)).size).toBe(1);
        });
      }),
      { numRuns: 200 },
    );
  });
});
