// The heartbeat loop on a fake clock: its cadence, a slow beat, a poke, an error, stop.
import { describe, expect, it } from 'vitest';
import { HeartbeatLoop } from '../../../src-main/agent/heartbeat-loop';
import { FakeClock } from '../coordinator/fake-clock';
import { settle } from './fake-pty';

function setup(beatMs = 0) {
  const clock = new FakeClock();
  const beats: number[] = [];
  const logs: string[] = [];
  let release: (() => void) | null = null;
  const behaviour = { fail: false, hold: false };
  const loop = new HeartbeatLoop({
    clock,
    log: (l) => logs.push(l),
    intervalMs: () => 100,
    beat: async () => {
      beats.push(clock.monotonic());
      if (behaviour.fail) throw new Error('boom');
      if (behaviour.hold) await new Promise<void>((resolve) => (release = resolve));
      if (beatMs) clock.advance(beatMs);
    },
  });
  return { clock, beats, logs, loop, behaviour, release: () => release?.() };
}

async function advance(clock: FakeClock, ms: number, step = 10): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    await settle();
  }
}

describe('HeartbeatLoop', () => {
  it('beats every interval from the start delay', async () => {
    const { clock, beats, loop } = setup();
    loop.start(100);
    await advance(clock, 350);
    expect(beats).toEqual([100, 200, 300]);
  });

  it('a slow beat eats into the wait for the next, so the cadence holds', async () => {
    const { clock, beats, loop } = setup(30);
    loop.start(0);
    await advance(clock, 250);
    expect(beats).toEqual([0, 100, 200]);
  });

  it('waits the interval the beat itself set (a rejoin told to ask again in 3 s), not the one before it', async () => {
    const clock = new FakeClock();
    const beats: number[] = [];
    let interval = 100;
    const loop = new HeartbeatLoop({
      clock,
      log: () => undefined,
      intervalMs: () => interval,
      beat: async () => {
        beats.push(clock.monotonic());
        interval = 3000; // what AgentSession.rejoin does on "awaiting approval, retryAfterMs 3000"
      },
    });
    loop.start(0);
    await advance(clock, 6500, 50);
    loop.stop();
    expect(beats).toEqual([0, 3000, 6000]); // before: 0, 100, 3100, 6100
  });

  it('a poke beats at once, or right after the beat in flight', async () => {
    const { clock, beats, loop, behaviour, release } = setup();
    loop.start(100);
    await advance(clock, 20);
    loop.poke();
    await advance(clock, 10);
    expect(beats).toEqual([20]);
    behaviour.hold = true;
    await advance(clock, 100); // the next beat starts at 120 and hangs
    expect(beats).toEqual([20, 120]);
    loop.poke();
    behaviour.hold = false;
    release();
    await settle(); // the hung beat ends at 130: the poke's beat follows at once
    await advance(clock, 10);
    expect(beats).toEqual([20, 120, 130]);
  });

  it('logs a failing beat and carries on; stop() ends it, even with a beat in flight', async () => {
    const { clock, beats, logs, loop, behaviour, release } = setup();
    behaviour.fail = true;
    loop.start(0);
    await advance(clock, 150);
    expect(beats).toEqual([0, 100]);
    expect(logs[0]).toBe('internal error in the heartbeat loop (carrying on): boom');
    behaviour.fail = false;
    behaviour.hold = true;
    await advance(clock, 60);
    loop.stop();
    release();
    await advance(clock, 500);
    expect(beats).toEqual([0, 100, 200]);
  });
});
