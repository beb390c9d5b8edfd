/**
 * A run's list of communication decisions (issue 24): each launch, retune, relaunch and reasoned keep, with its
 * time, reason and figures, for `runs show` and the run page. And the retune itself: a changed local-SGD period
 * sent to the running members' agents (`comm-update`, src-shared/runs/comm-control.ts), which their trainers
 * apply at the next average — no relaunch. Bounded (MAX_COMM_CHANGES, oldest out).
 */
import { MAX_COMM_CHANGES, type CommChange, type CommChangeHow, type CommDecision } from '../../../../src-shared/scheduling/comm-types';
import type { RunApplierDeps } from './run-applier-deps';
import type { RunRecord } from './run-record';

/**
 * Adds a decision to the run's list. A `kept` entry is added only when its reason differs from the newest entry's
 * (a keep re-said every tick would push the changes out).
 */
export function noteDecision(deps: Pick<RunApplierDeps, 'clock'>, run: RunRecord, d: CommDecision, how: CommChangeHow): void {
  const list = (run.commDecisions ??= []);
  const last = list.at(-1);
  if (how === 'kept' && last && (last.reason === d.reason || (last.how === 'kept' && last.generation === d.generation && sameHead(last.reason, d.reason)))) return;
  const entry: CommChange = { at: deps.clock.now(), generation: d.generation, strategy: d.strategy, localSgdPeriod: d.localSgdPeriod, how, reason: d.reason, commShare: d.commShare };
  if (how === 'kept' && last?.how === 'kept' && last.generation === d.generation) list[list.length - 1] = entry;
  else list.push(entry);
  if (list.length > MAX_COMM_CHANGES) list.splice(0, list.length - MAX_COMM_CHANGES);
}

/** The reasons start the same way ("local-sgd every 39 steps kept: …"): the same keep with fresher figures. */
function sameHead(a: string, b: string): boolean {
  const head = (s: string) => s.slice(0, s.indexOf(':') + 1);
  return head(a) !== '' && head(a) === head(b);
}

/**
 * Tells every member of the running generation its new local-SGD period. Returns the nodes told. A member that
 * misses it (its agent away) still changes with the others: the ranks agree before each average, and the highest
 * seq any rank has read wins.
 */
export function sendRetune(deps: Pick<RunApplierDeps, 'pool'>, run: RunRecord, next: CommDecision): string[] {
  if (next.strategy !== 'local-sgd' || next.localSgdPeriod === null) return [];
  const seq = (run.commRetuneSeq = (run.commRetuneSeq ?? 0) + 1);
  const told: string[] = [];
  for (const id of run.workerIds) {
    const rec = deps.pool.worker(id);
    if (!rec) continue;
    rec.mailbox.queue({ kind: 'comm-update', runId: run.id, generation: run.generation, seq, strategy: 'local-sgd', localSgdPeriod: next.localSgdPeriod, reason: next.reason.slice(0, 2000) });
    told.push(rec.node);
  }
  return told;
}
