// The join session on a fake clock: when the coordinator is given up, the session number, and rejoining.
import { describe, expect, it } from 'vitest';
import { AgentSession, lostAfterMs } from '../../../src-main/agent/agent-session';
import { JoinError } from '../../../src-main/agent/join-coordinator';
import type { JoinResponse } from '../../../src-shared/worker-protocol';
import { FakeClock } from '../coordinator/fake-clock';
import { settle } from './fake-pty';

const joinAnswer = (incarnation: number): JoinResponse => ({ workerId: 7, incarnation, heartbeatIntervalMs: 100, heartbeatTimeoutMs: 1000, sessionSecret: 's'.repeat(30) });

function setup() {
  const clock = new FakeClock();
  const logs: string[] = [];
  const joined: [number, boolean][] = [];
  const lost: string[] = [];
  const givenUp: string[] = [];
  const joins: (() => Promise<JoinResponse>)[] = [];
  let quiet: Promise<void> = Promise.resolve();
  const session = new AgentSession({
    clock,
    log: (l) => logs.push(l),
    join: () => joins.shift()!(),
    onJoined: (j, again) => joined.push([j.incarnation, again]),
    onLost: (why) => lost.push(why),
    onKeptGivenUp: (why) => givenUp.push(why),
    quiesce: () => quiet,
  });
  return { clock, logs, joined, lost, givenUp, joins, session, setQuiet: (p: Promise<void>) => (quiet = p) };
}

describe('lostAfterMs', () => {
  it('is the timeout plus half of it, and at least two intervals more', () => {
    expect(lostAfterMs({ heartbeatTimeoutMs: 1000, heartbeatIntervalMs: 100 })).toBe(1500);
    expect(lostAfterMs({ heartbeatTimeoutMs: 1000, heartbeatIntervalMs: 400 })).toBe(1800);
  });
});

describe('AgentSession', () => {
  it('gives the coordinator up only once nothing good came back for longer than lostAfterMs', () => {
    const { clock, session, lost, joined } = setup();
    session.begin(joinAnswer(1), false);
    expect(joined).toEqual([[1, false]]);
    expect([session.phase, session.epoch]).toEqual(['joined', 1]);
    clock.advance(1000);
    session.succeeded(); // a good answer restarts the silence
    clock.advance(1500);
    session.check();
    expect(lost).toEqual([]);
    clock.advance(1);
    session.check();
    expect(lost).toEqual(['no successful heartbeat for 1.5 s (no answer at all)']);
    expect([session.phase, session.epoch]).toEqual(['lost', 2]);
    session.check();
    session.lose('again');
    expect(lost).toHaveLength(1);
  });

  it('names the last failed answer, and follows a timeout the coordinator changes (clamped)', () => {
    const { clock, session, lost, logs } = setup();
    session.begin(joinAnswer(1), false);
    session.followTimeout(3000);
    expect(logs).toEqual(["the coordinator's failure timeout is now 3000 ms (was 1000 ms)"]);
    session.failed('503 coordinator overloaded');
    clock.advance(4500);
    session.check();
    expect(lost).toEqual([]);
    clock.advance(1);
    session.check();
    expect(lost).toEqual(['no successful heartbeat for 4.5 s (last answer: 503 coordinator overloaded)']);
    session.followTimeout(1); // below TIMING_BOUNDS: clamped to 500
    expect(session.joined!.heartbeatTimeoutMs).toBe(500);
  });

  it('rejoins once the old training is gone, logging each distinct failure once, as a new session', async () => {
    const { session, joins, joined, logs, setQuiet } = setup();
    session.begin(joinAnswer(1), false);
    session.lose('409');
    let trainingGone!: () => void;
    setQuiet(new Promise<void>((resolve) => (trainingGone = resolve)));
    const down = () => Promise.reject(new JoinError('unreachable', 'no answer'));
    joins.push(down, down, () => Promise.resolve(joinAnswer(2)));
    const first = session.rejoin();
    await settle();
    expect(joins).toHaveLength(3); // nothing tried while the old training still runs
    trainingGone();
    await first;
    await session.rejoin();
    expect(logs).toEqual(['still trying to join again: no answer']);
    await session.rejoin();
    expect(joined).toEqual([[1, false], [2, true]]);
    expect([session.phase, session.epoch, session.joined!.incarnation]).toEqual(['joined', 3, 2]);
  });

  it("after a revoke, asks again at the coordinator's retryAfterMs (within bounds), not at the refusal backoff", async () => {
    const { session, joins, joined, logs } = setup();
    session.begin(joinAnswer(1), false);
    session.lose('the coordinator ended this session (its approval was revoked)');
    const awaiting = (retryAfterMs?: number) => () => Promise.reject(new JoinError('awaiting', 'waiting for approval on the coordinator', retryAfterMs));
    joins.push(awaiting(3000), awaiting(3000), awaiting(600_000), awaiting(1), awaiting(), () => Promise.reject(new JoinError('refused', 'refused (403)')));
    await session.rejoin();
    expect(session.retryDelayMs).toBe(3000); // before: 1000, the refusal backoff's next step
    await session.rejoin();
    expect(session.retryDelayMs).toBe(3000); // before: 2000 and doubling to 5000
    await session.rejoin();
    expect(session.retryDelayMs).toBe(30_000); // clamped to AWAITING_RETRY_BOUNDS
    await session.rejoin();
    expect(session.retryDelayMs).toBe(2000);
    await session.rejoin();
    expect(session.retryDelayMs).toBe(2000); // no retryAfterMs: the bound's least
    await session.rejoin();
    expect(session.retryDelayMs).toBe(4000); // other refusals keep their doubling backoff
    expect(logs).toEqual(['still trying to join again: waiting for approval on the coordinator', 'still trying to join again: refused (403)']);
    expect(joined).toEqual([[1, false]]);
  });

  it('once ended, neither loses nor rejoins', async () => {
    const { session, lost, joins, clock } = setup();
    session.begin(joinAnswer(1), false);
    session.end();
    clock.advance(60_000);
    session.check();
    session.lose('x');
    joins.push(() => Promise.resolve(joinAnswer(2)));
    await session.rejoin();
    expect(lost).toEqual([]);
    expect(joins).toHaveLength(1);
    expect(session.phase).toBe('ended');
  });
});
