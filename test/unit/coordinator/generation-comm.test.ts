/**
 * A generation's launch plans carry the comm decision and ring order (generation-plan.ts planLaunch, applied by
 * generation-launch.ts; generation-comm.ts):
 * GPU_SHARE_COMM / GPU_SHARE_LOCAL_SGD_PERIOD / GPU_SHARE_NODE_RANK, shards in ring order, the store on the
 * best-connected member, and a changed link matrix changes the next generation's decision.
 */
import { describe, expect, it } from 'vitest';
import { recheckComm, stepFor } from '../../../src-main/core/coordinator/runs/generation-comm';
import { launchGeneration, type GenerationLauncher } from '../../../src-main/core/coordinator/runs/generation-launch';
import { planLaunch, type MemberFacts } from '../../../src-main/core/coordinator/runs/generation-plan';
import { runFacts } from '../../../src-main/core/coordinator/runs/run-placement';
import type { RunApplierDeps } from '../../../src-main/core/coordinator/runs/run-applier';
import { newRunRecord, runSnapshot, type RunRecord } from '../../../src-main/core/coordinator/runs/run-record';
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import { runSpecSchema, type LaunchPlan, type RunSpecInput } from '../../../src-shared/worker-protocol';

const T0 = Date.UTC(2026, 0, 1, 12);
const NAMES = ['', 'alpha', 'beta', 'gamma', 'delta'];

function links(pairs: [number, number, number][]): LinkMeasurement[] {
  return pairs.map(([a, b, mbps]) => ({ fromId: a, toId: b, from: NAMES[a]!, to: NAMES[b]!, mbps, rttMs: 0.2, measuredAt: T0 }));
}

class Cluster {
  matrix: LinkMeasurement[] = [];
  /** Each worker's torch as its join said (worker id -> version); left out: not known. */
  torch: Record<number, string | null> = {};
  readonly plans = new Map<number, LaunchPlan>();
  readonly said: string[] = [];
  readonly events: { kind: string; message: string }[] = [];
  /** Monotonic ms now (the re-decision rule's dwell counts from a decision). */
  mono = 0;
  readonly ap: GenerationLauncher;
  readonly record: (id: number) => MemberFacts;

  constructor() {
    const worker = (id: number) => ({
      node: NAMES[id]!,
      address: `10.0.0.${id}`,
      coordinatorAddr: '10.0.0.100',
      sameMachine: false,
      advertiseHost: `10.0.0.${id}`,
      rdzvPort: 29400 + id,
      torchVersion: this.torch[id],
      mailbox: { queue: (i: { kind: string; plan: LaunchPlan }) => i.kind === 'start' && this.plans.set(id, i.plan) },
    });
    const deps = {
      clock: { now: () => T0, monotonic: () => this.mono },
      pool: { worker: (id: number) => (id >= 1 && id <= 4 ? worker(id) : undefined) },
      messages: { event: (kind: string, _s: string, message: string) => this.events.push({ kind, message }), notify: () => {} },
      rdzvHostOverride: undefined,
      trustAdvertised: false,
      links: () => this.matrix,
    } as unknown as RunApplierDeps;
    this.record = worker;
    this.ap = {
      deps,
      refresh: () => {},
      stopMembers: () => {},
      say: (_run, text) => this.said.push(text),
      emit: () => {},
    };
  }

  run(over: Partial<RunSpecInput> = {}): RunRecord {
    return newRunRecord('run-1', runSpecSchema.parse({ name: 'demo', command: ['t.py'], samples: 90, ...over }), T0, () => T0);
  }

  launch(run: RunRecord, ids: number[], why: 'start' | 'scale' = 'start'): void {
    this.plans.clear();
    const input = {
      // No launcher runs here (stopMembers is a no-op): no old store drains for the next generation to wait for.
      run: { ...runFacts(run), storeDrainingHost: null },
      records: new Map(ids.map((id) => [id, this.record(id)])),
      links: this.matrix,
      storePorts: new Map(),
      step: stepFor(run.telemetry.commStats(), run.commMeasured, null),
      trustAdvertised: false,
      rdzvHostOverride: undefined,
      cause: 'test',
      clock: { now: T0, monotonic: this.mono },
    };
    const decision = planLaunch(input, ids.map((workerId) => ({ workerId, node: NAMES[workerId]!, gpuIndices: [] })));
    if (decision.kind !== 'launch') throw new Error(`held: ${decision.reason}`);
    launchGeneration(this.ap, run, decision.plan, why);
  }

  env(id: number): Record<string, string> {
    return this.plans.get(id)!.env;
  }
}

/** One progress line with the step figures H2's trainers print (1 MB of gradients, 0.2 s of compute). */
function reportStep(run: RunRecord): void {
  const record = { step: 1, loss: 1, samples_per_sec: 10, rank: 0, world_size: 3, grad_bytes: 1_000_000, compute_s: 0.2, comm: 'ddp' };
  run.telemetry.onOutput(1, 'alpha', run.generation, `GPU_SHARE_PROGRESS ${JSON.stringify(record)}\n`);
}

describe('generation comm decision', () => {
  it('a CPU run asking for powersgd trains it when every member joined with torch 2, else fp16 naming the torch 1.x member', () => {
    const c = new Cluster();
    c.torch = { 1: '2.11.0+cu130', 2: '2.4.1+cpu' };
    const ok = c.run({ comm: 'powersgd' });
    c.launch(ok, [1, 2]);
    expect(c.env(1).GPU_SHARE_COMM).toBe('powersgd');
    expect(ok.comm).toMatchObject({ strategy: 'powersgd', reason: 'asked for' });
    c.torch[2] = '1.13.1';
    const old = c.run({ comm: 'powersgd' });
    c.launch(old, [1, 2]);
    expect(c.env(1).GPU_SHARE_COMM).toBe('fp16');
    expect(old.comm!.reason).toBe('powersgd cannot run on gloo here: beta runs torch 1.13.1, whose gloo aborts on it (torch 2 or newer trains it on gloo); fp16 instead');
  });

  it('starts in plain DDP in join order while nothing is measured, then follows the links generation by generation', () => {
    const c = new Cluster();
    const run = c.run();
    c.launch(run, [1, 2, 3]);
    expect([1, 2, 3].map((id) => c.env(id).GPU_SHARE_COMM)).toEqual(['ddp', 'ddp', 'ddp']);
    expect([1, 2, 3].map((id) => c.env(id).GPU_SHARE_NODE_RANK)).toEqual(['0', '1', '2']);
    expect(c.env(1).GPU_SHARE_LOCAL_SGD_PERIOD).toBeUndefined();
    expect(run.comm).toMatchObject({ requested: 'auto', strategy: 'ddp', generation: 1, reason: 'no measurements yet: plain DDP until the trainer reports its step' });
    expect(c.said).toContain('generation 1 trains with ddp: no measurements yet: plain DDP until the trainer reports its step');

    // Fast links and a reported step: DDP fits (about 6 % of a step).
    reportStep(run);
    c.matrix = links([[1, 2, 940], [1, 3, 940], [2, 3, 940]]);
    c.launch(run, [1, 2, 3], 'scale');
    expect(run.comm).toMatchObject({ strategy: 'ddp', generation: 2 });
    expect(run.comm!.reason).toContain('940 Mbit/s');
    expect(c.events.filter((e) => e.kind === 'comm-changed')).toEqual([]);

    // beta–gamma drops to 19.6 Mbit/s: a CPU run (gloo) cannot use powersgd, so local-sgd every 25 steps
    // (1 MB x 4/3 over 19.6 Mbit/s = 0.54 s per average; 0.54 x 0.9 / (0.1 x 0.2 s) -> 25).
    c.matrix = links([[1, 2, 940], [1, 3, 990], [2, 3, 19.6]]);
    c.launch(run, [1, 2, 3], 'scale');
    expect(run.comm).toMatchObject({ strategy: 'local-sgd', localSgdPeriod: 25, generation: 3 });
    for (const id of [1, 2, 3]) expect(c.env(id)).toMatchObject({ GPU_SHARE_COMM: 'local-sgd', GPU_SHARE_LOCAL_SGD_PERIOD: '25' });
    expect(c.said.at(-2)).toMatch(/^generation 3 trains with local-sgd every 25 steps: DDP would spend \d+ %/);
    expect(run.linkNote).toBe('beta–gamma measures 19.6 Mbit/s, the other links 940 Mbit/s or more: this run trains at the speed of its slowest link');
    expect(c.events.filter((e) => e.kind === 'comm-changed').map((e) => e.message)).toEqual([expect.stringMatching(/^Run "demo" generation 3 trains with local-sgd every 25 steps: .*\(was ddp\)$/)]);

    const snap = runSnapshot(run);
    expect(snap.comm).toMatchObject({ strategy: 'local-sgd', localSgdPeriod: 25 });
    expect(snap.commStats).toEqual({ gradBytes: 1_000_000, stepComputeS: 0.2 });
    expect(snap.linkNote).toBe(run.linkNote);
  });

  it('orders the ring by the links: shards and GPU_SHARE_NODE_RANK follow it', () => {
    const c = new Cluster();
    // Two fast pairs (alpha–beta, gamma–delta) joined by 100 Mbit/s, diagonals at 10.
    c.matrix = links([[1, 2, 1000], [3, 4, 1000], [1, 3, 100], [2, 4, 100], [1, 4, 10], [2, 3, 10]]);
    const run = c.run({ samples: 100 });
    c.launch(run, [1, 3, 2, 4]);
    expect(run.workerIds).toEqual([1, 3, 2, 4]); // plan order, as the controller compares plans
    expect([1, 2, 4, 3].map((id) => c.env(id).GPU_SHARE_NODE_RANK)).toEqual(['0', '1', '2', '3']);
    expect(run.shardHistory.at(-1)!.shards.map((s) => [s.workerId, s.start, s.end])).toEqual([
      [1, 0, 25],
      [2, 25, 50],
      [4, 50, 75],
      [3, 75, 100],
    ]);
  });

  it('puts the rendezvous store on the member with the best worst link', () => {
    const c = new Cluster();
    c.matrix = links([[1, 2, 1000], [1, 3, 20], [2, 3, 1000]]);
    const run = c.run();
    c.launch(run, [1, 2, 3]);
    expect(run.rdzvHostId).toBe(2);
    expect(run.rdzvEndpoint).toBe('10.0.0.2:29402');
    expect(c.plans.get(2)!.rdzvHost).toBe(true);
  });

  it('keeps an explicit strategy as asked, period included', () => {
    const c = new Cluster();
    const run = c.run({ comm: 'local-sgd', localSgdPeriod: 4 });
    c.launch(run, [1, 2]);
    expect(c.env(1)).toMatchObject({ GPU_SHARE_COMM: 'local-sgd', GPU_SHARE_LOCAL_SGD_PERIOD: '4' });
    expect(run.comm).toMatchObject({ requested: 'local-sgd', reason: 'asked for (its period asked for)' });
  });

  it('looks again at a generation that started blind: another strategy is returned (to relaunch), the same one gains its numbers', () => {
    const c = new Cluster();
    const run = c.run();
    c.launch(run, [1, 2, 3]);
    expect(run.comm!.commShare).toBeNull();
    expect(recheckComm(c.ap.deps, run)).toBeNull(); // nothing reported, nothing measured
    reportStep(run);
    expect(recheckComm(c.ap.deps, run)).toBeNull(); // links still unmeasured
    c.matrix = links([[1, 2, 940], [1, 3, 990], [2, 3, 19.6]]);
    expect(recheckComm(c.ap.deps, run)).toMatchObject({ strategy: 'local-sgd', localSgdPeriod: 25, generation: 1 });
    expect(run.comm!.strategy).toBe('ddp'); // the caller relaunches; nothing changed under the running generation
    expect(recheckComm(c.ap.deps, run)).toBeNull(); // the same inputs are not looked at twice

    const fast = c.run();
    c.launch(fast, [1, 2, 3]);
    reportStep(fast);
    c.matrix = links([[1, 2, 940], [1, 3, 940], [2, 3, 940]]);
    expect(recheckComm(c.ap.deps, fast)).toBeNull();
    expect(fast.comm).toMatchObject({ strategy: 'ddp', generation: 1 });
    expect(fast.comm!.commShare).toBeGreaterThan(0);

    // Switching would save too little over the steps left to pay for a relaunch (a 0.5 ms step, 100 steps):
    // the generation keeps DDP and says why, with the numbers.
    const tiny = c.run();
    c.launch(tiny, [1, 2, 3]);
    const record = { step: 2, total_steps: 100, loss: 1, rank: 0, world_size: 3, grad_bytes: 4612, compute_s: 0.0005, comm: 'ddp' };
    tiny.telemetry.onOutput(1, 'alpha', tiny.generation, `GPU_SHARE_PROGRESS ${JSON.stringify(record)}\n`);
    c.matrix = links([[1, 2, 800], [1, 3, 800], [2, 3, 800]]);
    expect(recheckComm(c.ap.deps, tiny)).toBeNull();
    expect(tiny.comm).toMatchObject({ requested: 'auto', strategy: 'ddp', generation: 1 });
    expect(tiny.comm!.commShare).toBeGreaterThan(0.1);
    expect(tiny.comm!.reason).toMatch(/^ddp kept: local-sgd every \d+ steps would save about 0\.\d s over the 98 steps left, less than a relaunch costs \(about 10 s\); /);

    // An explicit strategy is never second-guessed.
    const asked = c.run({ comm: 'ddp' });
    c.launch(asked, [1, 2, 3]);
    reportStep(asked);
    c.matrix = links([[1, 2, 19.6], [1, 3, 19.6], [2, 3, 19.6]]);
    expect(recheckComm(c.ap.deps, asked)).toBeNull();
  });

  it('looks again when a link is measured again: relaunches only when the strategy in force spends over 15 % of a step', () => {
    const c = new Cluster();
    const run = c.run();
    c.matrix = links([[1, 2, 940], [1, 3, 940], [2, 3, 940]]);
    c.launch(run, [1, 2, 3]);
    reportStep(run);
    expect(recheckComm(c.ap.deps, run)).toBeNull(); // DDP still fits: it gains its numbers
    expect(run.comm).toMatchObject({ strategy: 'ddp', generation: 1 });
    expect(run.comm!.commShare).toBeCloseTo(0.054, 2);

    // DDP at 12 % of a step now (1 MB x 4/3 over 400 Mbit/s = 27 ms of 0.2 s): inside the 6-15 % band
    // (comm-redecide.ts), so the generation goes on as it is.
    c.matrix = links([[1, 2, 400], [1, 3, 400], [2, 3, 400]]).map((l) => ({ ...l, measuredAt: T0 + 1 }));
    expect(recheckComm(c.ap.deps, run)).toBeNull();
    expect(run.comm!.strategy).toBe('ddp');

    // beta–gamma falls to 19.6 Mbit/s: DDP would spend 73 % of a step; within 20 s of the decision it stands,
    // then it relaunches with local-sgd.
    c.matrix = links([[1, 2, 940], [1, 3, 990], [2, 3, 19.6]]).map((l) => ({ ...l, measuredAt: T0 + 2 }));
    expect(recheckComm(c.ap.deps, run)).toBeNull();
    expect(run.comm!.reason).toMatch(/^ddp kept: decided 0 s ago, under the 20 s a decision stands; afresh it would be local-sgd every 25 steps/);
    c.mono = 20_000;
    c.matrix = links([[1, 2, 940], [1, 3, 990], [2, 3, 19.6]]).map((l) => ({ ...l, measuredAt: T0 + 2 }));
    expect(recheckComm(c.ap.deps, run)).toMatchObject({ strategy: 'local-sgd', localSgdPeriod: 25 });
  });
});
