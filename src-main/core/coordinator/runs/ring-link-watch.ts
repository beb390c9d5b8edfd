/**
 * Keeps a training run's ring links measured while it trains (issue 24, item 1), by the rule of
 * src-shared/scheduling/link-evidence.ts: a trainer's new `comm_s` is weighed against the ring's slowest link (a
 * disagreement beyond ×2 probes it; a figure that agrees, or shows the link faster, is recorded as a training
 * measurement), a member whose heartbeats slow has its links probed, and ring links older than a minute are
 * probed again — one pair at a time per agent (link-survey.ts). Called every tick for each live run.
 */
import type { LinkMeasurement } from '../../../../src-shared/links/link-matrix';
import { EVIDENCE_PROBE_MIN_INTERVAL_MS, HEARTBEAT_SLOW_FACTOR, staleWhy, TRAINING_LINK_MAX_AGE_MS, weighEvidence } from '../../../../src-shared/scheduling/link-evidence';
import type { RingLinkSurvey, RunApplierDeps } from './run-applier-deps';
import type { RingPlan } from '../../../../src-shared/scheduling/ring-order';
import type { RunRecord } from './run-record';

/** What the survey offers a running run: probe its members' links, and record what its training saw. */
export type { RingLinkSurvey };

export type RingWatchDeps = Pick<RunApplierDeps, 'clock' | 'pool' | 'surveyLinks'> & { heartbeatIntervalMs?: number };

/** Members whose last heartbeat is over HEARTBEAT_SLOW_FACTOR intervals old (their node names). */
function slowHeartbeats(deps: RingWatchDeps, run: RunRecord): string[] {
  const interval = deps.heartbeatIntervalMs;
  if (!interval) return [];
  const now = deps.clock.monotonic();
  const slow: string[] = [];
  for (const id of run.workerIds) {
    const rec = deps.pool.worker(id) as { node: string; lastHeartbeat?: number } | undefined;
    if (rec?.lastHeartbeat !== undefined && now - rec.lastHeartbeat > HEARTBEAT_SLOW_FACTOR * interval) slow.push(rec.node);
  }
  return slow;
}

/**
 * Looks at the run's ring: weighs a new training figure, probes what is stale or disputed. Returns why it asked
 * for a probe on evidence now (the re-decision waits for it), or null.
 */
export function watchRingLinks(deps: RingWatchDeps, run: RunRecord, ring: RingPlan): string | null {
  const survey = deps.surveyLinks;
  if (!survey || run.state !== 'running' || run.workerIds.length < 2) return null;
  const now = deps.clock.monotonic();
  const link = ring.slowest;
  const disputed = weighNewFigure(survey, run, link);
  const stale = link ? staleWhy(link, deps.clock.now(), slowHeartbeats(deps, run)) : null;
  const why = disputed ?? (stale && stale.startsWith('heartbeats') ? stale : null);
  if (why && (run.linkCheckedAt === undefined || now - run.linkCheckedAt >= EVIDENCE_PROBE_MIN_INTERVAL_MS)) {
    run.linkCheckedAt = now;
    // Members that cannot be probed (older agents): the figures at hand decide, nothing is waited for.
    if (survey.remeasure(run.workerIds, 0) > 0) return why;
  }
  // The age rule: only the pairs measured over a minute ago go (the survey keeps one probe per agent at a time).
  survey.remeasure(run.workerIds, TRAINING_LINK_MAX_AGE_MS);
  return null;
}

/** A trainer's comm_s not weighed yet: recorded as a training measurement, or the reason to probe. */
function weighNewFigure(survey: RingLinkSurvey, run: RunRecord, link: LinkMeasurement | null): string | null {
  const fresh = run.telemetry.commMeasured();
  const stats = run.telemetry.commStats();
  if (!fresh || !stats || !link || link.mbps === null || fresh.generation !== run.generation) return null;
  const key = `${fresh.generation}:${fresh.strategy}:${fresh.seconds}`;
  if (run.evidenceKey === key) return null;
  run.evidenceKey = key;
  const round = { strategy: fresh.strategy, seconds: fresh.seconds, gradBytes: stats.gradBytes, powersgdBytes: stats.powersgdBytes ?? null, n: run.workerIds.length, computeS: stats.stepComputeS };
  const e = weighEvidence(round, link);
  if (e.remeasure) {
    if (e.trainingMbps !== null) survey.training(link.fromId, link.toId, e.trainingMbps);
    return e.remeasure;
  }
  survey.training(link.fromId, link.toId, null);
  return null;
}
