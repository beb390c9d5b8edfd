/**
 * The agent's join session with its coordinator: what the join answered (worker id, incarnation, timings; the
 * session secret travels in the client), a number that changes whenever the session does, and the rule for
 * giving the coordinator up. Instructions, reports and output carry the number they were made under, so those
 * of an old session are recognised and dropped. A lost session is joined again, as a new incarnation, once the
 * old session's training is gone.
 *
 * Unless the coordinator may only have restarted: it went silent, or it answers with another epoch than the
 * join's (docs/api.md, "Failover"). The coordinator is not in the training's data path, so then the session is
 * lost but its training is KEPT: the agent joins again at once with a claim for what it runs (re-attach), and
 * only stops the training when the claim is refused or the coordinator's failover grace has passed. A refusal
 * from the same epoch means this coordinator declared us failed: training stops at once, as before.
 */
import type { JoinResponse } from '../../src-shared/worker-protocol';
import type { Clock } from '../platform/ports';
import { awaitingRetryMs, clampTimeout, JoinError } from './join-coordinator';

/**
 * How long the agent hears nothing before it gives the coordinator up and stops its training: the timeout
 * plus half of it (at least two intervals). The coordinator judges by when requests arrive, the agent by when
 * answers do, and on a slow link answers come later than requests: giving up on the same clock turned a poor
 * link into failures the coordinator never declared. When the coordinator does fail this worker, the next
 * answer that gets through says so (401/404/409) and the agent stops at once.
 */
export function lostAfterMs(joined: Pick<JoinResponse, 'heartbeatTimeoutMs' | 'heartbeatIntervalMs'>): number {
  return joined.heartbeatTimeoutMs + Math.max(2 * joined.heartbeatIntervalMs, Math.floor(joined.heartbeatTimeoutMs / 2));
}

/**
 * Tries at joining again while lost: a coordinator that does not answer (restarting) is tried every 0.5 s, so a
 * 3 s outage is noticed within about half a second of it being back; one that answers and refuses, 0.5 s doubling to 5 s.
 */
export const REJOIN_BACKOFF = { firstMs: 500, maxMs: 5000 } as const;

/** none: not joined yet. ended: the agent is stopping; nothing changes any more. */
export type SessionPhase = 'none' | 'joined' | 'lost' | 'ended';

export interface AgentSessionOptions {
  clock: Clock;
  log: (line: string) => void;
  /** One join attempt; throws a JoinError. */
  join: () => Promise<JoinResponse>;
  /** A session began: the first join (again false) or a rejoin. */
  onJoined: (joined: JoinResponse, again: boolean) => void;
  /**
   * The session was lost (its number has already moved on). `kept`: the coordinator may only have restarted —
   * keep training and buffer its reports for the re-attach; otherwise stop training and forget what was queued.
   */
  onLost: (why: string, kept: boolean) => void;
  /** Training kept through a loss must stop now: its claim was refused, or the failover grace is over. */
  onKeptGivenUp: (why: string) => void;
  /** Resolves once nothing of the old session still runs; a rejoin waits for it. */
  quiesce: () => Promise<void>;
}

export class AgentSession {
  private state: SessionPhase = 'none';
  private current: JoinResponse | null = null;
  private number = 0;
  private lastOkAt = 0;
  /** What the latest failed heartbeat got back, for the message when the coordinator is given up. */
  private lastFailure: string | null = null;
  private lastRejoinComplaint = '';
  /** While lost with training kept: the claim to re-attach with, and since when (monotonic ms). */
  private keptSession: { epoch: string; incarnation: number; since: number; graceMs: number } | null = null;
  /** Delay before the next try at joining again (lost phase): 0.5 s after no answer, doubling to 5 s after refusals. */
  private retryMs: number = REJOIN_BACKOFF.firstMs;

  constructor(private readonly opts: AgentSessionOptions) {}

  get phase(): SessionPhase {
    return this.state;
  }

  /** The join's answer of the current (or last) session; null before the first join. */
  get joined(): JoinResponse | null {
    return this.current;
  }

  /** Changes at every join and every loss: work tagged with another number belongs to a session that is over. */
  get epoch(): number {
    return this.number;
  }

  /** While lost with training kept: the epoch and incarnation a re-attach claim names; null otherwise. */
  get kept(): { epoch: string; incarnation: number } | null {
    return this.keptSession;
  }

  /** How long to wait before the next beat while lost (a try at joining again). */
  get retryDelayMs(): number {
    return this.retryMs;
  }

  begin(joined: JoinResponse, again: boolean): void {
    if (this.state === 'ended') return;
    this.keptSession = null;
    this.retryMs = REJOIN_BACKOFF.firstMs;
    this.current = joined;
    this.number += 1;
    this.state = 'joined';
    this.lastOkAt = this.opts.clock.monotonic();
    this.lastFailure = null;
    this.lastRejoinComplaint = '';
    this.opts.onJoined(joined, again);
  }

  /** The coordinator answered a heartbeat as a coordinator does. */
  succeeded(): void {
    this.lastOkAt = this.opts.clock.monotonic();
    this.lastFailure = null;
  }

  /** A heartbeat got no proper answer: remembered for the message if the coordinator is given up. */
  failed(why: string): void {
    this.lastFailure = why;
  }

  /** Follows a failure timeout the coordinator changed (a run with its own); clamped like the join's. */
  followTimeout(ms: number): void {
    if (!this.current) return;
    const timeout = clampTimeout(ms);
    if (timeout === this.current.heartbeatTimeoutMs) return;
    this.opts.log(`the coordinator's failure timeout is now ${timeout} ms (was ${this.current.heartbeatTimeoutMs} ms)`);
    this.current = { ...this.current, heartbeatTimeoutMs: timeout };
  }

  /**
   * Gives the coordinator up once nothing good came back for longer than lostAfterMs — keeping the training when
   * the coordinator has a failover grace (it may have restarted). While lost with training kept, gives that up
   * once the grace is over (the coordinator, restarted or not, has failed this worker by then).
   */
  check(): void {
    const now = this.opts.clock.monotonic();
    if (this.state === 'lost' && this.keptSession && this.current) {
      const waited = now - this.keptSession.since;
      if (waited <= this.keptSession.graceMs + lostAfterMs(this.current)) return;
      this.keptSession = null;
      this.opts.onKeptGivenUp(`the coordinator did not take this worker back within its ${(waited / 1000).toFixed(1)} s failover grace`);
      return;
    }
    if (this.state !== 'joined' || !this.current) return;
    const silentMs = now - this.lastOkAt;
    if (silentMs <= lostAfterMs(this.current)) return;
    const why = this.lastFailure ? ` (last answer: ${this.lastFailure})` : ' (no answer at all)';
    this.lose(`no successful heartbeat for ${(silentMs / 1000).toFixed(1)} s${why}`, { mayHaveRestarted: true });
  }

  /**
   * The session is over. `refusedBy`: the epoch of the coordinator that refused it, when it said one. The training
   * is kept when the coordinator may only have restarted: it offers a failover grace, and either went silent
   * (`mayHaveRestarted`) or refused us under another epoch than the join's.
   */
  lose(why: string, how: { mayHaveRestarted?: boolean; refusedBy?: string } = {}): void {
    if (this.state !== 'joined') return;
    const joined = this.current;
    const restarted = how.refusedBy !== undefined && joined?.epoch !== undefined && how.refusedBy !== joined.epoch;
    const keep = joined?.epoch !== undefined && (joined.failoverGraceMs ?? 0) > 0 && (restarted || how.mayHaveRestarted === true);
    this.state = 'lost';
    this.number += 1; // instructions and reports of the old session are void from here on
    this.retryMs = REJOIN_BACKOFF.firstMs;
    this.keptSession = keep ? { epoch: joined.epoch!, incarnation: joined.incarnation, since: this.opts.clock.monotonic(), graceMs: joined.failoverGraceMs! } : null;
    this.opts.onLost(restarted ? `${why}; the coordinator restarted (epoch ${how.refusedBy})` : why, keep);
  }

  /**
   * One try at joining again; a failure is logged once per distinct message and the next try comes after
   * retryDelayMs. With training kept the join carries the re-attach claim (the agent adds it) and does not wait
   * for the training to end; a refused claim gives the training up before the new session begins.
   */
  async rejoin(): Promise<void> {
    // A rejoin never overlaps training from an old session that is not kept: wait for it to be gone first.
    if (!this.keptSession) await this.opts.quiesce();
    if (this.state !== 'lost') return;
    try {
      const joined = await this.opts.join();
      if (this.state !== 'lost') return;
      if (this.keptSession && !joined.reattach?.accepted) {
        this.keptSession = null;
        this.opts.onKeptGivenUp(`the coordinator did not take this worker back: ${joined.reattach && !joined.reattach.accepted ? joined.reattach.reason : 'it does not know re-attaching'}`);
        // The new incarnation never overlaps the training it gave up (a cut link, declared failed meanwhile).
        await this.opts.quiesce();
        if (this.state !== 'lost') return;
      }
      this.begin(joined, true);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // Nothing answering (a coordinator restarting): try again soon. It answered and refused: back off. Awaiting
      // approval (revoked, or never approved): ask again when the coordinator said to, as the first join does.
      const noAnswer = /cannot reach|connection refused|no answer/.test(message);
      if (error instanceof JoinError && error.kind === 'awaiting') this.retryMs = awaitingRetryMs(error);
      else this.retryMs = noAnswer ? REJOIN_BACKOFF.firstMs : Math.min(REJOIN_BACKOFF.maxMs, this.retryMs * 2);
      if (message !== this.lastRejoinComplaint) {
        this.opts.log(`still trying to join again: ${message}`);
        this.lastRejoinComplaint = message;
      }
    }
  }

  /** The agent is stopping: no more losses or rejoins (the number stays, so its last reports still go). */
  end(): void {
    this.state = 'ended';
  }
}
