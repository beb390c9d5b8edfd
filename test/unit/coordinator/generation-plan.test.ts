/**
 * planGeneration as a table (generation-plan.ts): plain inputs — the run's settings, the members' records, the
 * link map, the store ports other runs take, the clock — to the whole generation (members, ring order, store host
 * and endpoint, comm strategy and its reason, shards, held starts, data split) or a hold with its reason. No
 * service, clock or IO: each row builds its input, and the input is the same afterwards.
 */
import { describe, expect, it } from 'vitest';
import { planGeneration, type GenerationDecision, type GenerationInput, type MemberFacts, type RunFacts } from '../../../src-main/core/coordinator/runs/generation-plan';
import type { NodeCapacity } from '../../../src-shared/scheduling/capacity';
import type { TrainerCommStats } from '../../../src-shared/scheduling/comm-types';
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import { runSpecSchema, type RunSpecInput } from '../../../src-shared/worker-protocol';

const T0 = Date.UTC(2026, 0, 1, 12);
const MONO = 5_000;
const NAMES = ['', 'alpha', 'beta', 'gamma', 'delta'];
/** 1 MB of gradients and 0.2 s of compute a step, as a trainer reports them. */
const STEP: TrainerCommStats = { gradBytes: 1_000_000, stepComputeS: 0.2 };

function record(id: number, over: Partial<MemberFacts> = {}): MemberFacts {
  return { node: NAMES[id]!, address: `10.0.0.${id}`, coordinatorAddr: '10.0.0.100', sameMachine: false, advertiseHost: `10.0.0.${id}`, rdzvPort: 29400 + id, torchVersion: null, ...over };
}

/** A CPU machine with four slots and its active worker. */
function capacity(id: number): NodeCapacity {
  return { node: NAMES[id]!, workerId: id, online: true, state: 'active', declared: true, slots: 4, cuda: false, cpuCores: 8, ramMb: 16384, gpus: [], policy: null };
}

function links(pairs: [number, number, number][]): LinkMeasurement[] {
  return pairs.map(([a, b, mbps]) => ({ fromId: a, toId: b, from: NAMES[a]!, to: NAMES[b]!, mbps, rttMs: 0.2, measuredAt: T0 }));
}

interface Row {
  ids?: number[];
  spec?: Partial<RunSpecInput>;
  run?: Partial<RunFacts>;
  records?: Record<number, Partial<MemberFacts>>;
  notReady?: Record<number, string>;
  links?: LinkMeasurement[];
  storePorts?: Record<number, number[]>;
  step?: GenerationInput['step'];
  rdzvHostOverride?: string;
}

function given(row: Row): GenerationInput {
  const ids = row.ids ?? [1, 2, 3];
  const spec = runSpecSchema.parse({ name: 'demo', command: ['t.py'], samples: 90, minWorkers: 1, maxWorkers: 4, ...row.spec });
  const run: RunFacts = { id: 'run-1', spec, generation: 0, currentMembers: [], storeDrainingHost: null, startStep: 0, project: null, ...row.run };
  return {
    run,
    candidates: ids.map((id) => ({ workerId: id, node: NAMES[id]!, hasTorch: true, joinSeq: id, notReady: row.notReady?.[id] ?? null })),
    ledger: { nodes: ids.map(capacity), holdings: [] },
    records: new Map(ids.map((id) => [id, record(id, row.records?.[id])])),
    links: row.links ?? [],
    storePorts: new Map(Object.entries(row.storePorts ?? {}).map(([id, ports]) => [Number(id), new Set(ports)])),
    step: row.step ?? { stats: null, remembered: false },
    trustAdvertised: false,
    rdzvHostOverride: row.rdzvHostOverride,
    cause: 'test',
    clock: { now: T0, monotonic: MONO },
  };
}

/** The decision in short: what each row states. */
function summary(d: GenerationDecision): Record<string, unknown> {
  if (d.kind === 'hold') return { hold: d.on, reason: d.reason, members: d.members.map((m) => m.workerId) };
  const p = d.plan;
  const rank = (id: number) => p.starts.find((s) => s.workerId === id)!.plan.env.GPU_SHARE_NODE_RANK;
  return {
    generation: p.generation,
    members: p.members.map((m) => m.workerId),
    ring: p.ring.order,
    ranks: p.ring.order.map(rank),
    store: `${NAMES[p.storeHostId]} ${p.rdzvEndpoint}`,
    comm: `${p.comm.strategy}${p.comm.localSgdPeriod ? ` ${p.comm.localSgdPeriod}` : ''} g${p.comm.generation}: ${p.comm.reason}`,
    shards: p.shardMap.shards.map((s) => `${s.node} [${s.start}, ${s.end})`).join(', '),
    held: p.starts.filter((s) => s.held).map((s) => s.workerId),
    holdStartsUntil: p.holdStartsUntil,
  };
}

const BLIND = 'ddp g1: no measurements yet: plain DDP until the trainer reports its step';
const FIRST = { generation: 1, members: [1, 2, 3], ring: [1, 2, 3], ranks: ['0', '1', '2'], held: [], holdStartsUntil: null, shards: 'alpha [0, 30), beta [30, 60), gamma [60, 90)' };
/** beta has the best worst link (1000 Mbit/s to both others; alpha–gamma measures 20). */
const BETA_BEST = links([[1, 2, 1000], [1, 3, 20], [2, 3, 1000]]);

const rows: [name: string, row: Row, expected: Record<string, unknown>][] = [
  ['blind first generation: join order, store on the first member, plain DDP', {}, { ...FIRST, store: 'alpha 10.0.0.1:29401', comm: BLIND }],
  [
    'the ring follows the links: the fast pairs side by side, shards and NODE_RANK in ring order, plan order kept',
    { ids: [1, 2, 3, 4], spec: { samples: 100 }, links: links([[1, 2, 1000], [3, 4, 1000], [1, 3, 100], [2, 4, 100], [1, 4, 10], [2, 3, 10]]) },
    { members: [1, 2, 3, 4], ring: [1, 2, 4, 3], ranks: ['0', '1', '2', '3'], shards: 'alpha [0, 25), beta [25, 50), delta [50, 75), gamma [75, 100)' },
  ],
  ['the store goes to the member with the best worst link', { links: BETA_BEST }, { store: 'beta 10.0.0.2:29402' }],
  ['a member whose every store port another run takes is passed over', { links: BETA_BEST, storePorts: { 2: [29402] } }, { store: 'alpha 10.0.0.1:29401' }],
  ['a member offering another port hosts on the free one', { links: BETA_BEST, storePorts: { 2: [29402] }, records: { 2: { rdzvPorts: [29402, 29412] } } }, { store: 'beta 10.0.0.2:29412' }],
  ['the endpoint host is overridden, the port stays the host\'s', { rdzvHostOverride: 'store.example' }, { store: 'alpha store.example:29401' }],
  ['the next generation follows the one training now', { run: { generation: 3, currentMembers: [1, 2, 3] } }, { generation: 4, comm: BLIND.replace('g1', 'g4') }],
  ['starts wait for the old store still draining on the same host', { run: { storeDrainingHost: 1 } }, { store: 'alpha 10.0.0.1:29401', held: [2, 3], holdStartsUntil: MONO + 4000 }],
  ['no wait when the old store drains on another host', { run: { storeDrainingHost: 2 } }, { held: [], holdStartsUntil: null }],
  [
    'auto over a slow link with the step reported: local SGD',
    { links: links([[1, 2, 940], [1, 3, 990], [2, 3, 19.6]]), step: { stats: STEP, remembered: false } },
    { comm: expect.stringMatching(/^local-sgd 25 g1: DDP would spend \d+ %/) },
  ],
  [
    'the same with torch 2 on every member: powersgd',
    { links: links([[1, 2, 940], [1, 3, 990], [2, 3, 19.6]]), step: { stats: STEP, remembered: false }, records: { 1: { torchVersion: '2.4.1' }, 2: { torchVersion: '2.4.1' }, 3: { torchVersion: '2.11.0' } } },
    { comm: expect.stringMatching(/^powersgd g1: DDP would spend 73 % of a step .* 19\.6 Mbit\/s beta–gamma link/) },
  ],
  [
    'the members\' drift caps auto\'s period',
    { links: links([[1, 2, 940], [1, 3, 990], [2, 3, 19.6]]), step: { stats: STEP, remembered: false }, run: { driftCap: 10 } },
    { comm: expect.stringMatching(/^local-sgd 10 g1: .*; held at every 10 steps, the period the members' drift/) },
  ],
  [
    'an earlier run\'s step decides, and the reason says so',
    { links: links([[1, 2, 940], [1, 3, 940], [2, 3, 940]]), step: { stats: STEP, remembered: true } },
    { comm: expect.stringMatching(/^ddp g1: .*940 Mbit\/s.* \(the step as an earlier run of this trainer reported it\)$/) },
  ],
  ['an explicit strategy is kept as asked', { spec: { comm: 'local-sgd', localSgdPeriod: 4 } }, { comm: 'local-sgd 4 g1: asked for (its period asked for)' }],
  [
    'powersgd on gloo with a torch 1.x member: fp16, naming it',
    { spec: { comm: 'powersgd' }, records: { 1: { torchVersion: '2.4.1' }, 2: { torchVersion: '1.13.1' }, 3: { torchVersion: '2.4.1' } } },
    { comm: expect.stringMatching(/^fp16 g1: powersgd cannot run on gloo here: beta runs torch 1.13.1/) },
  ],
  ['too few members: held, saying who is missing', { ids: [1, 2], spec: { minWorkers: 3 } }, { hold: 'members', reason: 'waits for 1 more worker: no other worker is active', members: [] }],
  ['no worker at all', { ids: [] }, { hold: 'members', reason: 'waits for 1 more worker: no worker is active', members: [] }],
  [
    'a worker whose project is not ready is no member yet',
    { spec: { minWorkers: 3 }, notReady: { 3: 'fetching the project: 3.1 of 12.0 MiB' } },
    { hold: 'members', reason: 'waits for 1 more worker: gamma: fetching the project: 3.1 of 12.0 MiB', members: [] },
  ],
  [
    'every member\'s store ports are taken by other runs',
    { ids: [1, 2], storePorts: { 1: [29401], 2: [29402] } },
    {
      hold: 'store',
      reason: "every member already hosts another run's rendezvous store on every rendezvous port it offers: alpha (port 29401), beta (port 29402); it starts when another run ends or another worker can join it",
      members: [1, 2],
    },
  ],
  [
    'the only members every other can reach are busy',
    { records: { 1: { sameMachine: true, address: '127.0.0.1' }, 3: { coordinatorAddr: '10.1.0.100' } }, storePorts: { 2: [29402], 3: [29403] } },
    {
      hold: 'store',
      reason: "the only members every other member can reach (beta, gamma) already host another run's rendezvous store on every rendezvous port they offer; it starts when that run ends or a reachable worker joins it",
      members: [1, 2, 3],
    },
  ],
  [
    'no member every other can reach: two address families',
    { ids: [2, 3], records: { 3: { address: 'fd00::3', advertiseHost: 'fd00::3' } } },
    { hold: 'store', reason: expect.stringMatching(/^no member can host the rendezvous where every other member can reach it: the machines connect over different address families or from loopback; members: beta at 10\.0\.0\.2, gamma at fd00::3\. /), members: [2, 3] },
  ],
];

describe('planGeneration: inputs to the whole generation, or a hold with its reason', () => {
  it.each(rows)('%s', (_name, row, expected) => {
    const input = given(row);
    const before = structuredClone(input);
    expect(summary(planGeneration(input))).toMatchObject(expected);
    expect(input).toEqual(before); // it changed nothing it was given
  });

  it('each start carries the whole generation: endpoint, shard, store role, comm', () => {
    const d = planGeneration(given({ links: BETA_BEST, step: { stats: STEP, remembered: false }, run: { startStep: 40 } }));
    if (d.kind !== 'launch') throw new Error(d.reason);
    const beta = d.plan.starts.find((s) => s.workerId === 2)!.plan;
    expect(beta).toMatchObject({ runId: 'run-1', generation: 1, rdzvEndpoint: '10.0.0.2:29402', rdzvId: 'run-1-g1', rdzvHost: true, localAddr: '10.0.0.2', nnodes: '1:3' });
    expect(d.plan.starts.filter((s) => s.plan.rdzvHost).map((s) => s.workerId)).toEqual([2]);
    const shard = d.plan.shardMap.shards.find((s) => s.workerId === 2)!;
    expect(beta.env).toMatchObject({ GPU_SHARE_SHARD_START: String(shard.start), GPU_SHARE_SHARD_END: String(shard.end), GPU_SHARE_NUM_WORKERS: '3', GPU_SHARE_COMM: d.plan.comm.strategy });
    expect(d.plan.shardMap).toMatchObject({ generation: 1, totalSamples: 90, at: T0, cause: 'test' });
    expect(d.plan.step).toEqual({ stats: STEP, remembered: false });
  });

  it('a shard-mode project splits its data files over the members in ring order, each start naming its own', () => {
    const files = ['a.bin', 'b.bin', 'c.bin'].map((name) => ({ name, size: 10 }));
    const project = { snapshot: 'snap', data: 'data', dataMode: 'shard' as const, dataSplit: null, dataFiles: files };
    const d = planGeneration(given({ run: { project } }));
    if (d.kind !== 'launch') throw new Error(d.reason);
    expect(Object.values(d.plan.dataSplit!).map((names) => names.length)).toEqual([1, 1, 1]);
    for (const s of d.plan.starts) expect(s.plan.project).toMatchObject({ snapshot: 'snap', dataDir: 'data', dataMode: 'shard', dataFiles: d.plan.dataSplit![NAMES[s.workerId]!] });
    expect(project.dataSplit).toBeNull(); // the run's split is the launch's to write
  });
});
