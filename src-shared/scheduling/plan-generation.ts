/**
 * The scheduler's answer for one training run: which active workers make up its next generation and which whole
 * GPUs each member holds, or why it must wait. Pure: the run controller's planGeneration (core/coordinator
 * generation-plan.ts) builds the rest of the generation on it — store host, ring, comm, shards — and the job round
 * (core/jobs) plans waiting runs first so that the capacity a run would take is not given to a job.
 *
 * Rules: holdings of this run are ignored (its members may stay where they are); every other holding counts —
 * jobs' slots and VRAM, other runs' slots and GPUs. A member holds one slot and, for a GPU run, whole GPUs that
 * nothing else holds. A GPU belongs to at most one run member; a machine with a CPU-run member hosts no other
 * run's member; two GPU runs may share a machine on different GPUs; one run has at most one member per machine.
 * Current members come first (a run is not reshuffled when someone joins), then the others in join order. A
 * project run's candidate whose project is not ready (`notReady`) is refused with that reason.
 */
import type { NodeCapacity } from './capacity';
import { addHolding, tallyHoldings, type Holding } from './holdings';
import type { RunDemand } from './run-demand';
import { memberFit, type RunCandidate } from './run-fit';

export type { RunCandidate } from './run-fit';
export type { RunDemand } from './run-demand';

export interface RunPlanRequest {
  runId: string;
  /** The run's display name (what other runs' reasons call it). */
  name: string;
  demand: RunDemand;
  /** Worker ids of its live generation ([] while it waits or is paused). */
  currentMembers: number[];
}

export interface PlannedMember {
  workerId: number;
  node: string;
  /** Whole GPUs (indices on that node) the member holds; empty for a CPU run. */
  gpuIndices: number[];
}

export interface NodeReason {
  node: string;
  /** Starts with the node's name: "beta holds job r16-lr3e-3 (step 30 of 60)". */
  reason: string;
}

export type MemberPlan =
  | {
      kind: 'plan';
      /** min..max members: current members still eligible first, then others in join order. */
      members: PlannedMember[];
      /** Candidates that were looked at and could not be members (why the run does not grow further). */
      refused: NodeReason[];
    }
  | {
      kind: 'hold';
      /** "waits for 1 more worker: beta holds job r16-lr3e-3 (step 30 of 60)". */
      reason: string;
      nodes: NodeReason[];
    };

export interface PlanLedger {
  nodes: NodeCapacity[];
  holdings: Holding[];
}

export function planMembers(run: RunPlanRequest, candidates: RunCandidate[], ledger: PlanLedger): MemberPlan {
  const { demand } = run;
  const nodes = ledger.nodes;
  const usage = tallyHoldings(
    nodes,
    ledger.holdings.filter((h) => !(h.kind === 'run' && h.id === run.runId)),
  );
  const at = new Map(nodes.map((n, i) => [n.node, i]));
  // A worker whose GPUs are exactly a declared node's is that node (capacity.ts, as the Nodes view shows it): it is
  // placed, held and matched against allowed_hosts under the declared name, not the name it joined with.
  const declaredAs = new Map(nodes.flatMap((n) => (n.workerId === null ? [] : [[n.workerId, n.node] as const])));
  const current = new Set(run.currentMembers);
  const ordered = candidates.map((c) => ({ ...c, node: declaredAs.get(c.workerId) ?? c.node })).sort(
    (a, b) => Number(current.has(b.workerId)) - Number(current.has(a.workerId)) || a.joinSeq - b.joinSeq || a.workerId - b.workerId,
  );
  const members: PlannedMember[] = [];
  const refused: NodeReason[] = [];
  const memberOn = new Map<string, number>();
  for (const candidate of ordered) {
    if (members.length >= demand.maxWorkers) break;
    const taken = memberOn.get(candidate.node);
    if (taken !== undefined) {
      refused.push({ node: candidate.node, reason: `${candidate.node} already has a member of this run (worker ${taken})` });
      continue;
    }
    const i = at.get(candidate.node);
    const fit = memberFit(demand, candidate, i === undefined ? undefined : nodes[i], i === undefined ? undefined : usage[i]);
    if (!fit.ok) {
      refused.push({ node: candidate.node, reason: fit.reason });
      continue;
    }
    // A project run places a worker once its project is ready, so it never holds the others in the rendezvous.
    if (candidate.notReady) {
      refused.push({ node: candidate.node, reason: `${candidate.node}: ${candidate.notReady}` });
      continue;
    }
    const member = { workerId: candidate.workerId, node: candidate.node, gpuIndices: fit.gpuIndices };
    members.push(member);
    memberOn.set(candidate.node, candidate.workerId);
    addHolding(nodes[i!]!, usage[i!]!, memberHolding(run.runId, run.name, member));
  }
  if (members.length >= demand.minWorkers) return { kind: 'plan', members, refused };
  const missing = demand.minWorkers - members.length;
  const why = refused.length > 0 ? joinReasons(refused) : members.length === 0 ? 'no worker is active' : 'no other worker is active';
  return { kind: 'hold', reason: `waits for ${missing} more worker${missing === 1 ? '' : 's'}: ${why}`, nodes: refused };
}

/** Node reasons a hold's sentence quotes; the rest are counted (every one stays in `nodes`). */
export const REASONS_QUOTED = 8;

/** "a holds job x; b is not in allowed_hosts", then "; and 3 more nodes" past REASONS_QUOTED. */
export function joinReasons(nodes: readonly NodeReason[]): string {
  const quoted = nodes.slice(0, REASONS_QUOTED).map((n) => n.reason).join('; ');
  const more = nodes.length - REASONS_QUOTED;
  return more > 0 ? `${quoted}; and ${more} more node${more === 1 ? '' : 's'}` : quoted;
}

function memberHolding(runId: string, name: string, m: PlannedMember, detail?: string): Holding {
  return { node: m.node, kind: 'run', id: runId, name, gpuIndex: null, gpuIndices: [...m.gpuIndices], vramMb: 0, ...(detail ? { detail } : {}) };
}

/** What a run's members hold, as ledger holdings: one slot each and their whole GPUs. */
export function runHoldings(runId: string, name: string, members: readonly PlannedMember[], detail?: string): Holding[] {
  return members.map((m) => memberHolding(runId, name, m, detail));
}
