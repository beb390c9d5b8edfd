/**
 * Holds a running `auto` local-SGD generation to the drift bound (src-shared/scheduling/drift-bound.ts): a drift
 * its trainer reported over the bound shortens the period in the running trainers (the retune path: no relaunch)
 * and caps it for the rest of the run. Each report is judged once. Called every tick from recheckComm.
 */
import { boundByDrift, shareAtPeriod } from '../../../../src-shared/scheduling/drift-bound';
import { describeStrategy } from '../../../../src-shared/scheduling/comm-choice';
import { noteDecision, sendRetune } from './comm-decisions';
import type { RunApplierDeps } from './run-applier-deps';
import type { RunRecord } from './run-record';

/** Whether a drift over the bound retuned the run just now (the re-decision waits for the next tick then). */
export function boundDrift(deps: Pick<RunApplierDeps, 'clock' | 'pool' | 'messages'>, run: RunRecord): boolean {
  const current = run.comm;
  const d = run.telemetry.driftReported();
  if (!current || !d || current.strategy !== 'local-sgd' || current.localSgdPeriod === null || d.generation !== run.generation) return false;
  const key = `${d.generation}:${d.step}`;
  if (run.driftKey === key) return false;
  run.driftKey = key;
  const v = boundByDrift({ period: current.localSgdPeriod, drift: d.drift, driftSteps: d.steps, cap: run.driftCap ?? null });
  run.driftCap = v.cap ?? undefined;
  if (v.period === null || !v.why) return false;
  const next = { ...current, localSgdPeriod: v.period, commShare: shareAtPeriod(current.commShare, current.localSgdPeriod, v.period), reason: `${v.why} (at step ${d.step})` };
  const told = sendRetune(deps, run, next);
  run.comm = next;
  run.commDecidedAt = deps.clock.monotonic();
  noteDecision(deps, run, next, 'retune');
  deps.messages.event('comm-changed', 'info', `Run "${run.spec.name}" generation ${run.generation} trains with ${describeStrategy(next)}: ${next.reason} (was ${describeStrategy(current)}); told ${told.join(', ') || 'no member'}, no relaunch`, { runId: run.id, generation: run.generation });
  return true;
}
