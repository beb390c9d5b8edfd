import { describe, expect, it } from 'vitest';
import { JoinError, clampTimings, nodeNameFrom, retryJoin } from '../../../src-main/agent/join-coordinator';
import type { Clock } from '../../../src-main/platform/ports';

/** A clock whose timeouts fire at once, recording how long they were asked to wait. */
function instantClock(waits: number[]): Clock {
  return {
    now: () => 0,
    monotonic: () => 0,
    setInterval: () => ({ cancel: () => undefined }),
    setTimeout: (fn, ms) => {
      waits.push(ms);
      queueMicrotask(fn);
      return { cancel: () => undefined };
    },
  };
}

describe('clampTimings', () => {
  it('keeps a coordinator from making the agent spin or sleep for ever', () => {
    const base = { workerId: 1, incarnation: 1, sessionSecret: 'x'.repeat(32) };
    expect(clampTimings({ ...base, heartbeatIntervalMs: 1, heartbeatTimeoutMs: 1 })).toMatchObject({ heartbeatIntervalMs: 100, heartbeatTimeoutMs: 500 });
    expect(clampTimings({ ...base, heartbeatIntervalMs: 1e9, heartbeatTimeoutMs: 1e9 })).toMatchObject({ heartbeatIntervalMs: 60_000, heartbeatTimeoutMs: 600_000 });
    expect(clampTimings({ ...base, heartbeatIntervalMs: 1000, heartbeatTimeoutMs: 5000 })).toMatchObject({ heartbeatIntervalMs: 1000, heartbeatTimeoutMs: 5000 });
  });
});

describe('retryJoin', () => {
  it('retries what may pass (no answer, 5xx) with 1 s doubling to 30 s, logging each distinct failure once', async () => {
    const waits: number[] = [];
    const logs: string[] = [];
    let calls = 0;
    const result = await retryJoin(
      async () => {
        calls += 1;
        if (calls <= 4) throw new JoinError('unreachable', 'nothing is listening');
        if (calls <= 7) throw new JoinError('unreachable', 'failed to answer the join (503: starting)');
        return 'joined';
      },
      { clock: instantClock(waits), log: (l) => logs.push(l), stopped: () => false },
    );
    expect(result).toBe('joined');
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    expect(logs).toEqual(['nothing is listening — retrying in 1 s, and on until it answers (Ctrl-C to stop)', 'failed to answer the join (503: starting) — retrying in 16 s, and on until it answers (Ctrl-C to stop)']);
  });

  it('gives up at once on a refusal, and when the agent is stopping', async () => {
    const refused = retryJoin(async () => {
      throw new JoinError('unauthorized', 'wrong token');
    }, { clock: instantClock([]), log: () => undefined, stopped: () => false });
    await expect(refused).rejects.toMatchObject({ kind: 'unauthorized' });
    let stopped = false;
    const stopping = retryJoin(async () => {
      stopped = true;
      throw new JoinError('unreachable', 'down');
    }, { clock: instantClock([]), log: () => undefined, stopped: () => stopped });
    await expect(stopping).rejects.toMatchObject({ kind: 'unreachable', message: 'stopped before the coordinator answered (down)' });
  });

  it('a stop that cuts a try in flight while awaiting approval reads as the stop, not as a lost coordinator', async () => {
    let calls = 0;
    let stopped = false;
    const waiting = retryJoin(async () => {
      calls += 1;
      if (calls === 1) throw new JoinError('awaiting', 'waiting for approval', 10);
      stopped = true; // Ctrl-C arrives while the second ask is on the wire, and the socket closes under it
      throw new JoinError('unreachable', '127.0.0.1:1 closed the connection');
    }, { clock: instantClock([]), log: () => undefined, stopped: () => stopped });
    await expect(waiting).rejects.toMatchObject({ kind: 'awaiting', message: 'stopped while waiting for approval on the coordinator' });
  });
});

describe('nodeNameFrom', () => {
  it('turns a host name into a node name the coordinator accepts', () => {
    expect(nodeNameFrom('jetson-01.lan')).toBe('jetson-01.lan');
    expect(nodeNameFrom("Jo's MacBook Pro")).toBe('Jo-s-MacBook-Pro');
    expect(nodeNameFrom('--x')).toBe('x');
    expect(nodeNameFrom('')).toBe('worker');
  });
});
