/**
 * A run that was training when the coordinator died goes on, in its generation, with its members, while they
 * re-attach (failover-grace.ts): the coordinator is not in the training's data path, so nothing needs relaunching.
 * Before the failover grace existed the run was paused and relaunched from its checkpoint when the workers joined
 * again — a 3 s outage cost about 47 s of training. A member that does not come back within the grace fails the
 * ordinary way then (run-failures.ts), and only then is the run relaunched.
 */
import type { RunMemberHolding } from '../../../../src-shared/training';
import type { RunApplierDeps } from './run-applier-deps';
import { newMember, type RunRecord } from './run-record';
import { formatSeconds } from '../membership';

/** What the failover code (run-reattach.ts) may use of the controller while it restores a run. */
export interface RunReattachContext {
  readonly opts: Pick<RunApplierDeps, 'messages' | 'pool'>;
  say(run: RunRecord, text: string): void;
  find(runId: string): RunRecord | undefined;
}

/**
 * Keeps `run` (restored, state as stored) running at its generation when every member of it is among the workers
 * in grace; false when it cannot go on as it was (it was not running, or a member had already gone) — then the
 * caller waits for its workers to join again as before.
 */
export function resumeDuringGrace(ctl: RunReattachContext, run: RunRecord, holdings: readonly RunMemberHolding[] | undefined, inGrace: ReadonlySet<number>, graceMs: number): boolean {
  if (run.state !== 'running' || run.workerIds.length === 0 || !run.workerIds.every((id) => inGrace.has(id))) return false;
  const held = new Map((holdings ?? []).map((h) => [h.workerId, h]));
  run.members = new Map();
  for (const id of run.workerIds) {
    const rec = ctl.opts.pool.worker(id);
    // Started: its process was running when the coordinator stopped. Its GPUs are the ones it held then.
    run.members.set(id, { ...newMember(held.get(id)?.node ?? rec?.node ?? '', held.get(id)?.gpuIndices ?? []), started: true });
    // It ran this generation, so it can: what its join said comes back when it re-attaches.
    if (rec) rec.hasTorch = true;
  }
  const { spec } = run;
  ctl.say(run, `the coordinator restarted; generation ${run.generation} goes on while its workers re-attach (up to ${formatSeconds(graceMs)})`);
  ctl.opts.messages.event('run-resumed', 'info', `Run "${spec.name}" goes on at generation ${run.generation}: the coordinator restarted and waits up to ${formatSeconds(graceMs)} for its workers to re-attach`, { runId: run.id, generation: run.generation });
  return true;
}

/**
 * Why a re-attach claim for these run generations (one per run the worker kept: a machine with several GPUs trains
 * one run per GPU set) does not name what the runs train now; null when it does. A run this worker is a member of
 * that the claim does not name is refused: its start never arrived (the coordinator died with it), so the run
 * would wait for it forever.
 */
export function claimMismatch(
  ctl: Pick<RunReattachContext, 'find'> & { memberRuns(workerId: number): { id: string; generation: number }[] },
  workerId: number,
  runs: readonly { runId: string; generation: number; ended?: boolean }[],
): string | null {
  for (const { runId, generation, ended } of runs) {
    // A trainer that exited is nothing to keep: only a run this coordinator still has running must match it.
    if (ended && ctl.find(runId)?.state !== 'running') continue;
    const wrong = generationMismatch(ctl, workerId, runId, generation);
    if (wrong) return wrong;
  }
  const missing = ctl.memberRuns(workerId).find((m) => !runs.some((r) => r.runId === m.id));
  if (!missing) return null;
  return `${runs.length === 0 ? 'it runs nothing' : `it runs ${runs.map((r) => `run ${r.runId}`).join(', ')}`}, but is a member of run ${missing.id} generation ${missing.generation}`;
}

function generationMismatch(ctl: Pick<RunReattachContext, 'find'>, workerId: number, runId: string, generation: number): string | null {
  const run = ctl.find(runId);
  if (!run) return `run ${runId} is not known to this coordinator`;
  if (run.state !== 'running') return `run ${runId} is ${run.state}`;
  if (run.generation !== generation) return `run ${runId} is at generation ${run.generation}, not ${generation}`;
  if (!run.workerIds.includes(workerId)) return `this worker is no longer a member of run ${runId} generation ${generation}`;
  return null;
}
