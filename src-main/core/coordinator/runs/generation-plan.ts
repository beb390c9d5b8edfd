/**
 * A run's next generation, decided whole (issue 27): its members and their GPUs (planMembers, src-shared/scheduling),
 * the ring order from the measured links, which member hosts the c10d store at which endpoint, the communication
 * strategy with its reason, the shard map and every member's launch plan — or a hold with its reason. Pure: it
 * reads plain facts (the run's settings, the members' records, the link map, the clock) and changes nothing, so
 * the whole decision is tested as a table (test/unit/coordinator/generation-plan.test.ts). run-placement.ts
 * gathers what it reads; generation-launch.ts applies what it returns.
 */
import type { LinkMeasurement } from '../../../../src-shared/links/link-matrix';
import type { CommDecision, TrainerCommStats } from '../../../../src-shared/scheduling/comm-types';
import { planMembers, type NodeReason, type PlanLedger, type PlannedMember, type RunCandidate } from '../../../../src-shared/scheduling/plan-generation';
import { orderRing, type RingPlan } from '../../../../src-shared/scheduling/ring-order';
import { runDemand } from '../../../../src-shared/scheduling/run-demand';
import { assignShards } from '../../../../src-shared/shards';
import type { RunSpec, ShardMap } from '../../../../src-shared/training';
import type { LaunchPlan } from '../../../../src-shared/worker-protocol';
import { commFor, memberTorch } from './generation-comm';
import { buildLaunchPlan, formatEndpoint } from './launch-plan';
import { chooseRendezvous } from '../links';
import { launchProjectFor, splitForGeneration, type ProjectFacts } from './run-project-gate';
import { STORE_HANDOVER_MAX_MS } from './store-handover';

export type { PlannedMember } from '../../../../src-shared/scheduling/plan-generation';

/** What the plan reads of a worker's record: where the others reach it, the store ports it offers, its torch. */
export interface MemberFacts {
  node: string;
  /** The address the coordinator sees its agent connect from. */
  address: string | null;
  coordinatorAddr: string | null;
  sameMachine: boolean;
  advertiseHost: string;
  rdzvPort: number;
  /** Every port it offers for stores (one per GPU set it may train); an older agent offers its rdzvPort alone. */
  rdzvPorts?: number[];
  torchVersion?: string | null;
}

/** The rendezvous ports other running runs' stores take, per worker that hosts one. */
export type StorePorts = ReadonlyMap<number, ReadonlySet<number>>;

/** The run as the plan reads it. */
export interface RunFacts {
  id: string;
  spec: RunSpec;
  /** The generation training now (0 before the first): the plan's is the next. */
  generation: number;
  /** Worker ids of the live generation ([] while it waits or is paused). */
  currentMembers: number[];
  /** The longest local-SGD period auto may choose (drift-bound.ts); absent: no cap. */
  driftCap?: number;
  /** The worker whose old store may still listen once the live generation is told to stop (store-handover.ts). */
  storeDrainingHost: number | null;
  /** The run's step as the generation launches (its progress so far; 0 at the start). */
  startStep: number;
  project: ProjectFacts | null;
}

/** Everything a generation is decided from but the choice of members. */
export interface LaunchInput {
  run: RunFacts;
  /** Worker records by id; every planned member has one. */
  records: ReadonlyMap<number, MemberFacts>;
  links: readonly LinkMeasurement[];
  storePorts: StorePorts;
  /** The step the comm decision goes by (generation-comm.ts stepFor); `remembered`: an earlier run's. */
  step: { stats: TrainerCommStats | null; remembered: boolean };
  /** Publish what agents advertised instead of where they are seen from (NAT). */
  trustAdvertised: boolean;
  /** Host for --rdzv_endpoint instead of the store host's own address (the port stays the store host's). */
  rdzvHostOverride: string | undefined;
  /** Why this generation (the shard map and the output say it). */
  cause: string;
  /** Epoch ms (the shard map's time) and monotonic ms (how long held starts wait) now. */
  clock: { now: number; monotonic: number };
}

/** The members' inputs too: the active workers as candidates, and what every job and other run holds. */
export interface GenerationInput extends LaunchInput {
  candidates: RunCandidate[];
  ledger: PlanLedger;
}

/** One member's start: its launch plan, sent at once or held for the old store (`held`). */
export interface PlannedStart {
  workerId: number;
  plan: LaunchPlan;
  held: boolean;
}

/** A whole generation, ready to apply. */
export interface PlannedGeneration {
  generation: number;
  /** Plan order: current members still eligible first, then others in join order (what a new plan is compared with). */
  members: PlannedMember[];
  /** Candidates that could not be members (why the run does not grow further). */
  refused: NodeReason[];
  /** Ring order (the shards and GPU_SHARE_NODE_RANK follow it), store-host preference, slowest link, note. */
  ring: RingPlan;
  storeHostId: number;
  rdzvEndpoint: string;
  /** Monotonic ms until which the other members' starts wait for the old store on the same host; null: they go now. */
  holdStartsUntil: number | null;
  comm: CommDecision;
  step: LaunchInput['step'];
  shardMap: ShardMap;
  /** Shard mode: the data files by member node; null otherwise. */
  dataSplit: Readonly<Record<string, readonly string[]>> | null;
  /** In ring order. */
  starts: PlannedStart[];
}

export type GenerationDecision =
  | { kind: 'launch'; plan: PlannedGeneration }
  | {
      kind: 'hold';
      /** `members`: too few can be members; `store`: none of them can host the rendezvous store. */
      on: 'members' | 'store';
      reason: string;
      nodes: NodeReason[];
      /** The members a `store` hold had chosen ([] for a `members` hold). */
      members: PlannedMember[];
    };

/** The run's next generation from everything it may have now, or why it waits. */
export function planGeneration(input: GenerationInput): GenerationDecision {
  const { run } = input;
  const request = { runId: run.id, name: run.spec.name, demand: runDemand(run.spec), currentMembers: [...run.currentMembers] };
  const chosen = planMembers(request, input.candidates, input.ledger);
  if (chosen.kind === 'hold') return { kind: 'hold', on: 'members', reason: chosen.reason, nodes: chosen.nodes, members: [] };
  return planLaunch(input, chosen.members, chosen.refused);
}

/** The generation of these members: ring, store host, comm, shards and starts; or a hold when none can host the store. */
export function planLaunch(input: LaunchInput, members: PlannedMember[], refused: NodeReason[] = []): GenerationDecision {
  const { run, records } = input;
  const record = (id: number): MemberFacts => records.get(id)!;
  // Well-connected members stand next to each other on the ring; the shards and GPU_SHARE_NODE_RANK follow it.
  const ring = orderRing(members.map((m) => ({ workerId: m.workerId, node: m.node })), input.links);
  const store = chooseStore(input, members, ring);
  if (!store.ok) return { kind: 'hold', on: 'store', reason: store.reason, nodes: [], members };
  const generation = run.generation + 1;
  const order = ring.order;
  const comm = commOf(input, ring, generation);
  const shards = assignShards(run.spec.samples, order).map((s) => Object.freeze({ ...s, node: record(s.workerId).node }));
  const shardMap: ShardMap = Object.freeze({ generation, totalSamples: run.spec.samples, shards: Object.freeze(shards) as ShardMap['shards'], at: input.clock.now, cause: input.cause });
  // Shard mode: the data folder's files over the members in ring order, as few moved from the last split as can be.
  const dataSplit = splitForGeneration(run.project, order.map((id) => record(id).node));
  // The same host's old store may still listen: the others start once it is gone (store-handover.ts).
  const holdStarts = run.storeDrainingHost === store.hostWorkerId;
  const gpus = new Map(members.map((m) => [m.workerId, m.gpuIndices]));
  const starts = shards.map((s): PlannedStart => {
    const rec = record(s.workerId);
    const plan = buildLaunchPlan({
      runId: run.id,
      generation,
      spec: run.spec,
      workerId: s.workerId,
      node: rec.node,
      shardStart: s.start,
      shardEnd: s.end,
      numWorkers: order.length,
      rdzvEndpoint: store.endpoint,
      localAddr: store.localAddrs.get(s.workerId) ?? rec.advertiseHost,
      rdzvHost: s.workerId === store.hostWorkerId,
      gpuIndices: run.spec.useGpus ? gpus.get(s.workerId)! : null,
      comm,
      nodeRank: order.indexOf(s.workerId),
      startStep: run.startStep,
      project: launchProjectFor(run.project, dataSplit, rec.node),
    });
    return { workerId: s.workerId, plan, held: holdStarts && s.workerId !== store.hostWorkerId };
  });
  const holdStartsUntil = holdStarts ? input.clock.monotonic + STORE_HANDOVER_MAX_MS : null;
  const plan = { generation, members, refused, ring, storeHostId: store.hostWorkerId, rdzvEndpoint: store.endpoint, holdStartsUntil, comm, step: input.step, shardMap, dataSplit, starts };
  return { kind: 'launch', plan };
}

/** The ports a worker offers for stores that no other run's store takes (an older agent offers its rdzvPort alone). */
function freeStorePorts(w: MemberFacts, taken: ReadonlySet<number> | undefined): number[] {
  return (w.rdzvPorts ?? [w.rdzvPort]).filter((p) => !taken?.has(p));
}

/** The store host, its endpoint and the address each member is reached at; or why nobody can host it. */
type StoreChoice = { ok: true; hostWorkerId: number; endpoint: string; localAddrs: Map<number, string> } | { ok: false; reason: string };

/** Who hosts the store: the first member in the ring's preference every other can reach, with a port free. */
function chooseStore(input: LaunchInput, members: readonly PlannedMember[], ring: RingPlan): StoreChoice {
  const { records, storePorts } = input;
  // A worker can host as many runs' stores as it offers ports (one per GPU set it may train); with all taken, none.
  const busyHosts = new Set(members.map((m) => m.workerId).filter((id) => freeStorePorts(records.get(id)!, storePorts.get(id)).length === 0));
  const choice = chooseRendezvous(
    ring.order.map((id) => {
      const r = records.get(id)!;
      return { workerId: id, node: r.node, seenFrom: r.address, coordinatorAddr: r.coordinatorAddr, sameMachine: r.sameMachine, advertiseHost: r.advertiseHost, rdzvPort: r.rdzvPort };
    }),
    { trustAdvertised: input.trustAdvertised, busyHosts, preferHosts: ring.storeHostOrder },
  );
  if (!choice.ok) return choice;
  const port = freeStorePorts(records.get(choice.hostWorkerId)!, storePorts.get(choice.hostWorkerId))[0]!;
  return { ok: true, hostWorkerId: choice.hostWorkerId, localAddrs: choice.localAddrs, endpoint: formatEndpoint(input.rdzvHostOverride ?? choice.endpointHost, port) };
}

/** The strategy the generation trains with, saying so when it goes by an earlier run's step. */
function commOf(input: LaunchInput, ring: RingPlan, generation: number): CommDecision {
  const { run, step } = input;
  const decided = commFor({ spec: run.spec, generation, driftCap: run.driftCap }, ring, memberTorch((id) => input.records.get(id), ring), step.stats);
  return step.remembered && decided.commShare !== null ? { ...decided, reason: `${decided.reason} (the step as an earlier run of this trainer reported it)` } : decided;
}
