/**
 * The failover grace: after the coordinator restarts, the workers that were live when it died are neither failed
 * nor forgotten. Their agents keep training (the coordinator is not in the training's data path), so each is
 * kept live-but-unattached until a deadline (restart + grace, 60 s by default: Nomad's FailoverHeartbeatTTL),
 * and an agent that joins again with a claim for what it runs — its old incarnation under the old epoch, the run
 * and generation it trains — is taken back as it was: same worker, same incarnation, the run goes on in its
 * generation with no restart charged. Only a worker that does not come back by the deadline goes down the
 * failure path then. Pure bookkeeping on the injected clock: the service asks it and acts.
 */
import type { JoinResponse, ReattachClaim } from '../../../../src-shared/worker-protocol';
import type { Clock } from '../../../platform/ports';
import { formatSeconds, LIVE_STATES } from './member-record';
import type { Membership } from './membership';
import type { JoinFields } from './member-record';

/** How long a restarted coordinator waits for the workers that were live to re-attach, unless told otherwise. */
export const DEFAULT_FAILOVER_GRACE_MS = 60_000;

/**
 * What the run side says about a claim: the generation it names is the one its run trains now, or — naming none —
 * the worker is a member of no run; null when so, else why not.
 */
/** Why the run generations a claim names (one per run the worker kept; none: it ran nothing) do not hold; null when they do. */
export type GenerationCheck = (workerId: number, runs: { runId: string; generation: number; ended?: boolean }[]) => string | null;

export type ReattachVerdict = { ok: true } | { ok: false; reason: string };

interface Waiting {
  incarnation: number;
  /** Monotonic ms after which the worker goes down the failure path. */
  deadline: number;
}

export class FailoverGrace {
  private readonly waiting = new Map<number, Waiting>();
  /** The epoch of the coordinator before this one: the only epoch a claim may name. */
  private previousEpoch: string | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly pool: Membership,
    readonly graceMs: number = DEFAULT_FAILOVER_GRACE_MS,
  ) {}

  /** Called by restore(): these workers were live when the coordinator before (epoch `previousEpoch`) stopped. */
  begin(previousEpoch: string | null, workers: { workerId: number; incarnation: number }[]): void {
    this.previousEpoch = previousEpoch;
    if (this.graceMs <= 0) return;
    const deadline = this.clock.monotonic() + this.graceMs;
    for (const w of workers) this.waiting.set(w.workerId, { incarnation: w.incarnation, deadline });
  }

  /** The cause a worker in grace shows until it comes back. */
  waitingCause(): string {
    return `the coordinator restarted; waiting up to ${formatSeconds(this.graceMs)} for it to re-attach`;
  }

  isWaiting(workerId: number): boolean {
    return this.waiting.has(workerId);
  }

  /** Ids still waiting; none once everyone came back or the deadline passed. */
  waitingIds(): number[] {
    return [...this.waiting.keys()];
  }

  /**
   * A worker in grace joined again: whether its claim takes it back as it was. Anything but a claim for its own
   * incarnation under the previous epoch, naming the run generation this worker is a member of now (or none
   * when it is a member of none) — is refused with the reason. Either way it is no longer waiting.
   */
  reattach(workerId: number, claim: ReattachClaim | null | undefined, checkGeneration: GenerationCheck): ReattachVerdict {
    const w = this.waiting.get(workerId);
    if (!w) return { ok: false, reason: 'this coordinator is not waiting for this worker to re-attach' };
    this.waiting.delete(workerId);
    if (!claim) return { ok: false, reason: 'the join claimed nothing to re-attach' };
    if (this.previousEpoch === null || claim.epoch !== this.previousEpoch) return { ok: false, reason: `the claim is for another coordinator (epoch ${claim.epoch})` };
    if (claim.incarnation !== w.incarnation) return { ok: false, reason: `the claim is for incarnation ${claim.incarnation}, not ${w.incarnation}` };
    // An older agent's claim names one run (runId/generation); a newer one every run it kept (runs).
    const single = claim.runId !== null && claim.generation !== null ? [{ runId: claim.runId, generation: claim.generation }] : [];
    const wrong = checkGeneration(workerId, claim.runs ?? single);
    return wrong ? { ok: false, reason: wrong } : { ok: true };
  }

  /**
   * Called every tick before the heartbeat check: keeps the workers in grace from being declared silent, and
   * returns those whose deadline passed (no longer waiting: the caller fails them).
   */
  tick(): number[] {
    if (this.waiting.size === 0) return [];
    const now = this.clock.monotonic();
    const expired: number[] = [];
    for (const [id, w] of this.waiting) {
      const pw = this.pool.worker(id);
      if (!pw || pw.incarnation !== w.incarnation || !LIVE_STATES.has(pw.state)) {
        this.waiting.delete(id); // left, failed or rejoined some other way meanwhile
        continue;
      }
      if (now >= w.deadline) {
        this.waiting.delete(id);
        expired.push(id);
      } else {
        this.pool.updateHeartbeat(id);
      }
    }
    return expired;
  }

  /**
   * Takes back a worker whose claim held: its join's fields, heard from now, the same incarnation (no new
   * incarnation: what it runs goes on). Returns the event line, naming the runs that go on.
   */
  takeBack(workerId: number, fields: JoinFields, runs: { name: string; generation: number }[]): { incarnation: number; message: string } {
    const rec = this.pool.require(workerId);
    rec.takeJoin(fields);
    rec.lastHeartbeat = this.clock.monotonic();
    rec.stateCause = 're-attached after the coordinator restarted';
    const member = runs.map((r) => `; run "${r.name}" generation ${r.generation} goes on`).join('');
    return { incarnation: rec.incarnation, message: `Worker ${rec.node} re-attached after the coordinator restarted (incarnation ${rec.incarnation}${member})` };
  }

  /** The join answer's verdict on a claim, when the join carried one. */
  static answer(claimed: boolean, verdict: ReattachVerdict | null): Pick<JoinResponse, 'reattach'> {
    if (!claimed) return {};
    if (verdict?.ok) return { reattach: { accepted: true } };
    return { reattach: { accepted: false, reason: verdict ? verdict.reason : 'this coordinator did not restart while it ran' } };
  }

  /** The cause a worker that never came back fails with. */
  expiredCause(): string {
    return `did not re-attach within the ${formatSeconds(this.graceMs)} failover grace after the coordinator restarted`;
  }
}
