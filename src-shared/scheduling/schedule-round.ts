/**
 * The order of one scheduling round: runs before pending jobs. Each run that wants members (waiting, paused, or
 * running below max_workers) is planned in turn, oldest first, against what is held plus what the runs before it
 * reserved; the members its plan would add are reserved as holdings, and only then are pending jobs placed on
 * what is left. Running jobs are never displaced: they are holdings like any other, so a run that needs their
 * slot or GPU waits and says so. A run that cannot reach min_workers reserves nothing, so a run that can never
 * start does not starve the job queue.
 */
import type { Holding } from './holdings';
import { planMembers, runHoldings, type MemberPlan, type PlanLedger, type RunCandidate, type RunPlanRequest } from './plan-generation';

/** Detail on a reserved member's holding: the node cards and reasons say "run r2 (reserved)". */
export const RESERVED = 'reserved';

export interface RunReservations {
  /** The ledger's holdings followed by every reservation. */
  holdings: Holding[];
  /** Each run's plan, in the order planned. */
  plans: { runId: string; plan: MemberPlan }[];
}

/**
 * `runs` in the order they are served (the caller puts the oldest first); candidates are the active workers. A
 * machine may be a member of several runs on disjoint whole GPUs, a CPU run's alone: planMembers' rule
 * (run-fit.ts), the same the run controller plans with.
 */
export function reserveForRuns(runs: RunPlanRequest[], candidates: RunCandidate[], ledger: PlanLedger): RunReservations {
  const holdings = [...ledger.holdings];
  const plans: RunReservations['plans'] = [];
  for (const run of runs) {
    const plan = planMembers(run, candidates, { nodes: ledger.nodes, holdings });
    plans.push({ runId: run.runId, plan });
    if (plan.kind !== 'plan') continue;
    const current = new Set(run.currentMembers);
    holdings.push(...runHoldings(run.runId, run.name, plan.members.filter((m) => !current.has(m.workerId)), RESERVED));
  }
  return { holdings, plans };
}
