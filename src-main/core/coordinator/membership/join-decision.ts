/**
 * What a join does with the node's earlier record, decided from plain facts so that every branch — a new node, a
 * worker taken back after a coordinator restart, a rejoin, a live session replaced by a restarted agent — reads
 * in one table (test/unit/coordinator/join-decision.test.ts). CoordinatorService.join only applies the answer.
 */
import type { ReattachVerdict } from './failover-grace';
import { LIVE_STATES, type MemberRecord } from './member-record';

/** The node's earlier record as the join sees it, or null for a node this coordinator has never seen. */
export interface EarlierRecord {
  state: MemberRecord['state'];
  /** The coordinator restarted and was holding this worker's place in its failover grace when the join came. */
  waitedInGrace: boolean;
  /** The grace's verdict on the join's re-attach claim (failover-grace.ts). */
  verdict: ReattachVerdict;
}

/** How a live session the join replaces is ended, and who pays for it. */
export interface ReplacedSession {
  /** The old session's failure cause, as the worker's record and its events show it. */
  cause: string;
  /**
   * `shrink`: back after a coordinator restart without its training — not the run's failure, so no restart is
   * charged and its runs shrink. `failure`: the agent restarted under a live session, which a run pays for.
   */
  charge: 'shrink' | 'failure';
  /** It was training: the run's failure message names it. */
  wasActive: boolean;
}

export type JoinDecision =
  | { kind: 'add' }
  | { kind: 'take-back' }
  | { kind: 'rejoin'; replaces: ReplacedSession | null };

/** The decision for a join of `node` given its earlier record. */
export function decideJoin(node: string, earlier: EarlierRecord | null): JoinDecision {
  if (earlier === null) return { kind: 'add' };
  if (earlier.verdict.ok) return { kind: 'take-back' };
  if (!LIVE_STATES.has(earlier.state)) return { kind: 'rejoin', replaces: null };
  // Same name from the same machine (the gate checked) while the old session is still live: the agent restarted.
  const cause = earlier.waitedInGrace
    ? `came back after the coordinator restarted but could not re-attach: ${earlier.verdict.reason}`
    : `agent restarted: ${node} joined again before its old session timed out`;
  return { kind: 'rejoin', replaces: { cause, charge: earlier.waitedInGrace ? 'shrink' : 'failure', wasActive: earlier.state === 'active' } };
}
