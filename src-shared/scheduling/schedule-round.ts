/**
 * The order of one scheduling round: runs before pending jobs. Each run that wants members (waiting, paused, or
 * running below max_workers) is planned in turn, oldest first, against what is held plus what the runs before it
 * reserved; the members its plan would add are reserved as holdings, and only then are pending jobs placed on
 * what is left. Running jobs are never displaced: they are holdings like any other, so a run that needs their
 * slot or GPU waits and says so. A run that cannot reach min_workers reserves nothing, so a run that can never
 * start does not starve the job queue.
 */
import type { Holding } from './holdings';
import { listText } from './holder-text';
import { joinReasons, planGeneration, runHoldings, type GenerationPlan, type NodeReason, type PlanLedger, type RunCandidate, type RunPlanRequest } from './plan-generation';

/** Detail on a reserved member's holding: the node cards and reasons say "run r2 (reserved)". */
export const RESERVED = 'reserved';

export interface RunReservations {
  /** The ledger's holdings followed by every reservation. */
  holdings: Holding[];
  /** Each run's plan, in the order planned. */
  plans: { runId: string; plan: GenerationPlan }[];
}

export interface ReserveOptions {
  /**
   * Runs one machine may be a member of at once (live or reserved); left out, any number on different GPUs. The
   * coordinator's agents train one run at a time (core/coordinator/run-placement.ts), and a reservation the run
   * controller would never take would keep jobs off that machine for nothing.
   */
  runsPerMachine?: number;
}

/** `runs` in the order they are served (the caller puts the oldest first); candidates are the active workers. */
export function reserveForRuns(runs: RunPlanRequest[], candidates: RunCandidate[], ledger: PlanLedger, opts: ReserveOptions = {}): RunReservations {
  const holdings = [...ledger.holdings];
  const plans: RunReservations['plans'] = [];
  for (const run of runs) {
    const free: RunCandidate[] = [];
    const busy: NodeReason[] = [];
    for (const c of candidates) {
      const others = otherRuns(holdings, c.node, run.runId);
      if (opts.runsPerMachine === undefined || others.length < opts.runsPerMachine) free.push(c);
      else busy.push({ node: c.node, reason: `${c.node} trains ${listText(others.map((n) => `run ${n}`))} (one run per machine)` });
    }
    const plan = withBusy(planGeneration(run, free, { nodes: ledger.nodes, holdings }), busy);
    plans.push({ runId: run.runId, plan });
    if (plan.kind !== 'plan') continue;
    const current = new Set(run.currentMembers);
    holdings.push(...runHoldings(run.runId, run.name, plan.members.filter((m) => !current.has(m.workerId)), RESERVED));
  }
  return { holdings, plans };
}

/** The names of the runs other than `runId` that hold members on `node`. */
function otherRuns(holdings: Holding[], node: string, runId: string): string[] {
  const names: string[] = [];
  const ids = new Set<string>();
  for (const h of holdings) {
    if (h.kind !== 'run' || h.node !== node || h.id === runId || ids.has(h.id)) continue;
    ids.add(h.id);
    names.push(h.name);
  }
  return names;
}

/** The machines left out for other runs are part of why a run waits, or of why it does not grow. */
function withBusy(plan: GenerationPlan, busy: NodeReason[]): GenerationPlan {
  if (busy.length === 0) return plan;
  if (plan.kind === 'plan') return { ...plan, refused: [...plan.refused, ...busy] };
  const nodes = [...plan.nodes, ...busy];
  const head = plan.reason.slice(0, plan.reason.indexOf(': '));
  return { kind: 'hold', reason: `${head}: ${joinReasons(nodes)}`, nodes };
}
