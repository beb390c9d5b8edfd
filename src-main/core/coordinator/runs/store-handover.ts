/**
 * A relaunch whose store host is the same worker as the generation it replaces must not let the other members
 * reach the OLD store: that launcher is still stopping on the same port (the agent has one rendezvous port), a fast
 * member — a warm launcher is ready in a fraction of a second — connects to it, the old store closes under it, and
 * the rendezvous fails: a second relaunch (seen as 8–15 s recoveries instead of under one). So while the old
 * host's launcher has not reported its exit, the other members' start instructions wait here, at most
 * STORE_HANDOVER_MAX_MS (a lost report must not hold a run up). The host's `started` report of the new generation
 * ends the wait too: an agent starts a run's next generation only once its previous one has exited
 * (worker-agent.ts, `start`), and that report comes first — the agent sends `exited` only after one more
 * heartbeat (so a finished run shows its last step), which once held the others for ~3 s.
 */
import type { LaunchPlan } from '../../../../src-shared/worker-protocol';
import type { HeldStarts, RunRecord, StoreDraining } from './run-record';

/** Longest the other members' starts wait for the old store host's launcher to exit. */
export type { HeldStarts, StoreDraining };

export const STORE_HANDOVER_MAX_MS = 4000;



/** Called as a running generation is told to stop: remembers whether its store host's launcher still runs. */
export function noteStoreStopping(run: RunRecord): void {
  const host = run.rdzvHostId;
  if (host === null || run.state !== 'running') return;
  const member = run.members.get(host);
  run.storeDraining = member && !member.exit ? { workerId: host, generation: run.generation } : null;
}

/**
 * The worker whose old store may still listen as the next generation starts: the live generation's store host if
 * its launcher still runs (as noteStoreStopping will note when it is told to stop), else the one still draining.
 * A next generation hosted on it holds its other members' starts (generation-plan.ts).
 */
export function drainingStoreHost(run: RunRecord): number | null {
  const host = run.rdzvHostId;
  if (host === null || run.state !== 'running') return run.storeDraining?.workerId ?? null;
  const member = run.members.get(host);
  return member && !member.exit ? host : null;
}

/** A worker's launcher of `generation` exited: true when that was the old store the held starts wait for. */
export function storeLauncherExited(run: RunRecord, workerId: number, generation: number): boolean {
  const draining = run.storeDraining;
  if (!draining || draining.workerId !== workerId || draining.generation !== generation) return false;
  run.storeDraining = null;
  return true;
}

/**
 * A worker's launcher of `generation` started: true when it is the old store host starting the generation whose
 * other members wait — its previous launcher, and the old store with it, is gone.
 */
export function storeHostRelaunched(run: RunRecord, workerId: number, generation: number): boolean {
  const draining = run.storeDraining;
  if (!draining || draining.workerId !== workerId || run.heldStarts?.generation !== generation || generation <= draining.generation) return false;
  run.storeDraining = null;
  return true;
}

/** Takes the held starts that may go now (the old store is gone, or waited for long enough). */
export function takeHeldStarts(run: RunRecord, now: number, storeGone: boolean): Array<[workerId: number, plan: LaunchPlan]> {
  const held = run.heldStarts;
  if (!held) return [];
  if (held.generation !== run.generation || run.state !== 'running') {
    run.heldStarts = null;
    return [];
  }
  if (!storeGone && now < held.until) return [];
  run.heldStarts = null;
  run.storeDraining = null;
  return [...held.plans.entries()];
}
