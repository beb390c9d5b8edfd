// Several runs at once, each its own group (generations, shards, restarts), placed by the one scheduler against
// one ledger: jobs' holdings from the job service's hook, other runs' members and GPUs.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { restoreCoordinator } from '../../../src-main/core/coordinator-persistence';
import { openStateDb } from '../../../src-main/core/state';
import { workerFacts } from '../../../src-main/core/jobs/job-placement-round';
import { nodeCapacities } from '../../../src-shared/scheduling/capacity';
import type { Holding } from '../../../src-shared/scheduling/holdings';
import type { LaunchPlan } from '../../../src-shared/worker-protocol';
import { MAX_LIVE_RUNS } from '../../../src-main/core/coordinator/runs/run-controller';
import { isApiProblem } from '../../../src-main/core/coordinator/common/api-problem';
import { Harness, type SimWorker } from './harness';

const starts = (w: SimWorker): LaunchPlan[] => w.received.flatMap((i) => (i.kind === 'start' ? [i.plan] : []));
const stops = (w: SimWorker, runId: string) => w.received.filter((i) => i.kind === 'stop' && i.runId === runId).length;
const run = (h: Harness, id: string) => h.svc.runs().find((r) => r.id === id)!;

/** Joins and activates workers with `gpus` GPUs each. */
function gpuWorkers(h: Harness, gpus: number, ...nodes: string[]): SimWorker[] {
  const ws = nodes.map((n) => h.worker(n, { gpus }).join());
  ws.forEach((w) => w.beat());
  return ws;
}

describe('run groups — several runs at once', () => {
  it('two runs on disjoint workers train at once, each with its own generations and shards', () => {
    const h = new Harness();
    const [a, b, c, d] = h.activeWorkers('alpha', 'beta', 'gamma', 'delta');
    const r1 = h.svc.startRun(h.spec({ name: 'r1', samples: 100, minWorkers: 2, maxWorkers: 2, placement: { allowedHosts: ['alpha', 'beta'] } }));
    const r2 = h.svc.startRun(h.spec({ name: 'r2', samples: 60, minWorkers: 2, maxWorkers: 2, placement: { allowedHosts: ['gamma', 'delta'] } }));
    expect(r1).toMatchObject({ state: 'running', generation: 1, workerIds: [a!.workerId, b!.workerId] });
    expect(r2).toMatchObject({ state: 'running', generation: 1, workerIds: [c!.workerId, d!.workerId] });
    expect(r2.memberHoldings).toEqual([
      { workerId: c!.workerId, node: 'gamma', gpuIndices: [] },
      { workerId: d!.workerId, node: 'delta', gpuIndices: [] },
    ]);
    h.run(1000);
    expect([a!, b!].map((w) => w.running?.runId)).toEqual([r1.id, r1.id]);
    expect([c!, d!].map((w) => w.running?.runId)).toEqual([r2.id, r2.id]);
    expect([a!.shard(), b!.shard()]).toEqual([[0, 50], [50, 100]]);
    expect([c!.shard(), d!.shard()]).toEqual([[0, 30], [30, 60]]);
    expect(c!.running!.rdzvId).toBe(`${r2.id}-g1`);
    expect(h.eventMessages('run-started')).toHaveLength(2);
  });

  it('a member of run A failing relaunches A only: B keeps its generation and is told nothing', () => {
    const h = new Harness();
    const [a, b, c, d] = h.activeWorkers('alpha', 'beta', 'gamma', 'delta');
    const rA = h.svc.startRun(h.spec({ name: 'A', maxWorkers: 2, maxRestarts: 3, placement: { allowedHosts: ['alpha', 'beta'] } }));
    const rB = h.svc.startRun(h.spec({ name: 'B', maxWorkers: 2, placement: { allowedHosts: ['gamma', 'delta'] } }));
    h.run(1000);
    h.run(6000, [a!, c!, d!]); // beta goes silent
    expect(run(h, rA.id)).toMatchObject({ state: 'running', generation: 2, restartsUsed: 1, workerIds: [a!.workerId] });
    expect(run(h, rB.id)).toMatchObject({ state: 'running', generation: 1, restartsUsed: 0, workerIds: [c!.workerId, d!.workerId] });
    expect(stops(c!, rB.id) + stops(d!, rB.id)).toBe(0);
    expect(h.svc.runOutput(rB.id)).not.toContain('beta');
    expect(h.notifications().find((n) => n.title === 'Worker beta failed')?.body).toMatch(/shards rebalanced\.$/);

    // A crash in B relaunches B alone.
    d!.exit(1);
    h.run(1000, [a!, c!, d!]);
    expect(run(h, rB.id)).toMatchObject({ generation: 2, restartsUsed: 1 });
    expect(run(h, rA.id)).toMatchObject({ generation: 2, restartsUsed: 1 });
    expect(b!.running?.generation).toBe(1);
  });

  it('a job holding beta keeps run B waiting with "beta holds job …"; B starts when the job ends', () => {
    let jobs: Holding[] = [{ node: 'beta', kind: 'job', id: 'job-7', name: 'r16-lr3e-3', gpuIndex: null, vramMb: 0, detail: 'step 30 of 60' }];
    const h = new Harness({
      before: (svc) =>
        svc.setJobHooks({
          beats: () => {},
          capacity: () => ({ nodes: nodeCapacities({ nodes: [] }, workerFacts(svc.workers(), new Map()), []), holdings: jobs }),
        }),
    });
    const [, b] = h.activeWorkers('alpha', 'beta');
    const rA = h.svc.startRun(h.spec({ name: 'A', maxWorkers: 1, placement: { allowedHosts: ['alpha'] } }));
    const rB = h.svc.startRun(h.spec({ name: 'B', maxWorkers: 1, placement: { allowedHosts: ['beta'] } }));
    expect(rA.state).toBe('running');
    expect(rB).toMatchObject({ state: 'waiting', generation: 0 });
    expect(rB.stateCause).toMatch(/^waits for 1 more worker: .*beta holds job r16-lr3e-3/);
    h.run(3000);
    expect(run(h, rB.id).state).toBe('waiting');
    expect(b!.running).toBeNull();

    jobs = []; // the job ended
    h.run(3000);
    expect(run(h, rB.id)).toMatchObject({ state: 'running', generation: 1, workerIds: [b!.workerId] });
    expect(b!.running?.runId).toBe(rB.id);
    expect(run(h, rA.id).generation).toBe(1);
  });

  it('a run that pauses frees its machines: a run waiting for one starts on it, and the paused one says who holds it', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('alpha', 'beta');
    const rA = h.svc.startRun(h.spec({ name: 'A', minWorkers: 2, maxWorkers: 2, maxRestarts: 5 }));
    const rB = h.svc.startRun(h.spec({ name: 'B', minWorkers: 1, maxWorkers: 1 }));
    expect(run(h, rB.id).state).toBe('waiting');
    h.run(1000);
    h.run(7000, [a!]); // beta goes silent: A falls below min_workers and pauses
    expect(run(h, rA.id).state).toBe('paused');
    expect(run(h, rB.id)).toMatchObject({ state: 'running', workerIds: [a!.workerId] });
    a!.beat();
    expect(a!.running?.runId).toBe(rB.id);
    b!.join();
    h.run(2000, [a!, b!]);
    expect(run(h, rA.id)).toMatchObject({ state: 'paused', stateCause: 'waits for 1 more worker: alpha is a member of run B (a CPU run takes a machine no other run uses)' });
  });

  it('a run below max_workers grows by a generation when a worker joins; a run at max_workers does not move', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('alpha', 'beta');
    const full = h.svc.startRun(h.spec({ name: 'full', maxWorkers: 1 }));
    const growing = h.svc.startRun(h.spec({ name: 'growing', maxWorkers: 3 }));
    expect(run(h, full.id).workerIds).toEqual([a!.workerId]);
    expect(run(h, growing.id)).toMatchObject({ generation: 1, workerIds: [b!.workerId] });
    const c = h.worker('gamma').join();
    c.beat();
    h.run(2000);
    expect(run(h, growing.id)).toMatchObject({ state: 'running', generation: 2, workerIds: [b!.workerId, c.workerId] });
    expect(run(h, growing.id).shardHistory.at(-1)!.cause).toBe('workers joined');
    expect(run(h, full.id)).toMatchObject({ generation: 1, workerIds: [a!.workerId] });
    expect(c.running?.runId).toBe(growing.id);
  });

  it('a GPU is never given to two holders: a run member takes whole GPUs a job does not hold, and its launch plan names them', () => {
    const jobs: Holding[] = [{ node: 'xeon', kind: 'job', id: 'job-1', name: 'lora-a', gpuIndex: 0, vramMb: 8000 }];
    const h = new Harness({
      before: (svc) => svc.setJobHooks({ beats: () => {}, capacity: () => ({ nodes: nodeCapacities({ nodes: [] }, workerFacts(svc.workers(), new Map()), []), holdings: jobs }) }),
    });
    const [x, y] = gpuWorkers(h, 2, 'xeon', 'yak');
    const spec = (name: string) => h.spec({ name, useGpus: true, minWorkers: 2, maxWorkers: 2, placement: { gpusPerMember: 1 } });
    const r1 = h.svc.startRun(spec('r1'));
    expect(r1.memberHoldings).toEqual([
      { workerId: x!.workerId, node: 'xeon', gpuIndices: [1] },
      { workerId: y!.workerId, node: 'yak', gpuIndices: [0] },
    ]);
    x!.beat();
    y!.beat();
    expect(starts(x!).map((p) => p.gpuIndices)).toEqual([[1]]);
    expect(starts(y!).map((p) => p.gpuIndices)).toEqual([[0]]);
    // A second GPU run of two members finds one: yak's GPU 1 is free, xeon's two are held by the job and r1.
    const r2 = h.svc.startRun(spec('r2'));
    expect(r2).toMatchObject({ state: 'waiting', generation: 0, memberHoldings: [] });
    expect(r2.stateCause).toBe('waits for 1 more worker: xeon holds job lora-a and run r1');
    expect(starts(x!)).toHaveLength(1);
    // A CPU run's plan names no GPUs.
    const cpu = h.worker('cpu-box').join();
    cpu.beat();
    const r3 = h.svc.startRun(h.spec({ name: 'r3', placement: { allowedHosts: ['cpu-box'] } }));
    cpu.beat();
    expect(r3.memberHoldings).toEqual([{ workerId: cpu.workerId, node: 'cpu-box', gpuIndices: [] }]);
    expect(starts(cpu)[0]!.gpuIndices).toBeUndefined();
  });

  it('a worker whose GPUs are a declared node\'s is placed as that node: cluster.yaml names it "desktop", it joined as "vm"', () => {
    const desktop = { name: 'desktop', host: 'localhost', transport: 'local' as const, max_adapters: 2, gpus: [0, 1].map((i) => ({ uuid: `GPU-vm-${i}`, type: 'rtx-4090', vram_mb: 24564, memory_type: 'discrete' as const })) };
    const jobs: Holding[] = [];
    const h = new Harness({
      before: (svc) => svc.setJobHooks({ beats: () => {}, capacity: () => ({ nodes: nodeCapacities({ nodes: [desktop] }, workerFacts(svc.workers(), new Map()), []), holdings: jobs }) }),
    });
    const vm = h.worker('vm', { gpus: 2, rdzvPorts: [29500, 29501] }).join();
    vm.beat();
    // Old behaviour: "waits for 1 more worker: vm is not among the cluster's nodes (no capacity known for it)".
    const r1 = h.svc.startRun(h.spec({ name: 'r1', useGpus: true, placement: { gpusPerMember: 1, allowedHosts: ['desktop'] } }));
    expect(r1).toMatchObject({ state: 'running', memberHoldings: [{ workerId: vm.workerId, node: 'desktop', gpuIndices: [0] }] });
    // Its holding counts against the declared node: a second run takes the other GPU, a third waits naming both.
    const r2 = h.svc.startRun(h.spec({ name: 'r2', useGpus: true, placement: { gpusPerMember: 1 } }));
    expect(r2.memberHoldings).toEqual([{ workerId: vm.workerId, node: 'desktop', gpuIndices: [1] }]);
    const r3 = h.svc.startRun(h.spec({ name: 'r3', useGpus: true, placement: { gpusPerMember: 1 } }));
    expect(r3.state).toBe('waiting');
    expect(r3.stateCause).toMatch(/^waits for 1 more worker: desktop .*r1.*r2/);
  });

  it('two GPU runs share a 2-GPU machine on disjoint GPUs, each store on its own port; a third run waits, saying who holds the GPUs', () => {
    const h = new Harness();
    const duo = h.worker('duo', { gpus: 2, rdzvPorts: [29500, 29501] }).join();
    duo.beat();
    const spec = (name: string) => h.spec({ name, useGpus: true, minWorkers: 1, maxWorkers: 1, placement: { gpusPerMember: 1 } });
    const r1 = h.svc.startRun(spec('r1'));
    const r2 = h.svc.startRun(spec('r2'));
    expect([r1, r2].map((r) => [r.state, r.memberHoldings])).toEqual([
      ['running', [{ workerId: duo.workerId, node: 'duo', gpuIndices: [0] }]],
      ['running', [{ workerId: duo.workerId, node: 'duo', gpuIndices: [1] }]],
    ]);
    duo.beat();
    expect(starts(duo).map((p) => [p.runId, p.gpuIndices, p.rdzvEndpoint])).toEqual([
      [r1.id, [0], '127.0.0.1:29500'],
      [r2.id, [1], '127.0.0.1:29501'],
    ]);
    const r3 = h.svc.startRun(spec('r3'));
    expect(r3).toMatchObject({ state: 'waiting', stateCause: 'waits for 1 more worker: duo: all 2 GPUs held by runs r1 and r2' });
    // r1 ends: its GPU and its store's port go to the waiting run.
    h.svc.stopRun(r1.id);
    duo.beat();
    h.run(2000, [duo]);
    expect(run(h, r3.id)).toMatchObject({ state: 'running', memberHoldings: [{ workerId: duo.workerId, node: 'duo', gpuIndices: [0] }] });
    expect(starts(duo).at(-1)).toMatchObject({ runId: r3.id, gpuIndices: [0], rdzvEndpoint: '127.0.0.1:29500' });
  });

  it("an older agent offers one rendezvous port: a second run on its other GPU waits for the store's port, saying so", () => {
    const h = new Harness();
    const duo = h.worker('duo', { gpus: 2, rdzvPort: 29500 }).join();
    duo.beat();
    const spec = (name: string) => h.spec({ name, useGpus: true, minWorkers: 1, maxWorkers: 1, placement: { gpusPerMember: 1 } });
    expect(h.svc.startRun(spec('r1')).state).toBe('running');
    const r2 = h.svc.startRun(spec('r2'));
    expect(r2.state).not.toBe('running');
    expect(r2.stateCause).toContain("already hosts another run's rendezvous store on every rendezvous port it offers: duo (port 29500)");
  });

  it(`takes at most ${MAX_LIVE_RUNS} live runs at once, saying what to do; an ended run makes room`, () => {
    const h = new Harness();
    const ids = Array.from({ length: MAX_LIVE_RUNS }, (_, i) => h.svc.startRun(h.spec({ name: `r${i}` })).id);
    let refusal: unknown = null;
    try {
      h.svc.startRun(h.spec({ name: 'one too many' }));
    } catch (e) {
      refusal = e;
    }
    expect(isApiProblem(refusal) && refusal.status).toBe(409);
    expect((refusal as Error).message).toBe(`${MAX_LIVE_RUNS} runs are live, the most this coordinator takes at once; stop one (gpu-share runs stop ID) before starting another`);
    h.svc.stopRun(ids[0]!);
    expect(h.svc.startRun(h.spec({ name: 'now there is room' })).state).toBe('waiting');
  });

  it('a coordinator restart keeps every live run: both go on (none is failed for being a second live run)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gs-run-groups-'));
    const dbs: ReturnType<typeof openStateDb>[] = [];
    const coordinatorOn = () => {
      const db = openStateDb(dir, { batch: { flushMs: 60_000 } });
      dbs.push(db);
      return new Harness({ before: (svc) => restoreCoordinator(db, svc, () => 1_700_000_000_000) });
    };
    try {
      const first = coordinatorOn();
      first.activeWorkers('alpha', 'beta');
      const r1 = first.svc.startRun(first.spec({ name: 'r1', maxWorkers: 1, placement: { allowedHosts: ['alpha'] } }));
      const r2 = first.svc.startRun(first.spec({ name: 'r2', maxWorkers: 1, placement: { allowedHosts: ['beta'] } }));
      first.run(1000);
      expect([run(first, r1.id).state, run(first, r2.id).state]).toEqual(['running', 'running']);
      // Killed without a word; a new coordinator on the same database.
      const second = coordinatorOn();
      for (const id of [r1.id, r2.id]) {
        const r = run(second, id);
        expect(r.state, r.stateCause).not.toBe('failed');
        expect(r.generation).toBe(1);
      }
    } finally {
      for (const db of dbs) db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
