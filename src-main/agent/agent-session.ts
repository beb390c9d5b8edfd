/**
 * The agent's join session with its coordinator: what the join answered (worker id, incarnation, timings; the
 * session secret travels in the client), a number that changes whenever the session does, and the rule for
 * giving the coordinator up. Instructions, reports and output carry the number they were made under, so those
 * of an old session are recognised and dropped. A lost session is joined again, as a new incarnation, once the
 * old session's training is gone.
 */
import type { JoinResponse } from '../../src-shared/worker-protocol';
import type { Clock } from '../platform/ports';
import { clampTimeout } from './join-coordinator';

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

/** none: not joined yet. ended: the agent is stopping; nothing changes any more. */
export type SessionPhase = 'none' | 'joined' | 'lost' | 'ended';

export interface AgentSessionOptions {
  clock: Clock;
  log: (line: string) => void;
  /** One join attempt; throws a JoinError. */
  join: () => Promise<JoinResponse>;
  /** A session began: the first join (again false) or a rejoin. */
  onJoined: (joined: JoinResponse, again: boolean) => void;
  /** The session was lost (its number has already moved on): stop training, forget what was queued. */
  onLost: (why: string) => void;
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

  begin(joined: JoinResponse, again: boolean): void {
    if (this.state === 'ended') return;
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

  /** Gives the coordinator up once nothing good came back for longer than lostAfterMs. */
  check(): void {
    if (this.state !== 'joined' || !this.current) return;
    const silentMs = this.opts.clock.monotonic() - this.lastOkAt;
    if (silentMs <= lostAfterMs(this.current)) return;
    const why = this.lastFailure ? ` (last answer: ${this.lastFailure})` : ' (no answer at all)';
    this.lose(`no successful heartbeat for ${(silentMs / 1000).toFixed(1)} s${why}`);
  }

  lose(why: string): void {
    if (this.state !== 'joined') return;
    this.state = 'lost';
    this.number += 1; // instructions and reports of the old session are void from here on
    this.opts.onLost(why);
  }

  /** One try at joining again; a failure is logged once per distinct message and the next tick tries again. */
  async rejoin(): Promise<void> {
    // A rejoin never overlaps training from the old session: wait for it to be gone first.
    await this.opts.quiesce();
    if (this.state !== 'lost') return;
    try {
      const joined = await this.opts.join();
      if (this.state !== 'lost') return;
      this.begin(joined, true);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
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
