/**
 * A relaunch on the same store host holds the other members' starts until that host's old launcher (and the store
 * it served on the one rendezvous port) has exited — else a fast warm member rendezvouses with the dying old store
 * and the generation fails once more. At most STORE_HANDOVER_MAX_MS: a lost exit report must not hold a run up.
 */
import { describe, expect, it } from 'vitest';
import { STORE_HANDOVER_MAX_MS } from '../../../src-main/core/coordinator/runs/store-handover';
import type { Instruction } from '../../../src-shared/worker-protocol';
import { Harness, type SimWorker } from './harness';

const starts = (is: Instruction[]) => is.flatMap((i) => (i.kind === 'start' ? [i.plan.generation] : []));

/** Three members training generation 1; a non-host member leaves, so generation 2 runs on the same store host. */
function relaunchOnSameHost() {
  const h = new Harness();
  h.activeWorkers('alpha', 'beta', 'gamma');
  h.svc.startRun(h.spec({ samples: 90, minWorkers: 2 }));
  h.run(2000);
  expect(h.liveRun()).toMatchObject({ state: 'running', generation: 1 });
  const host = h.workers.find((w) => w.running?.rdzvHost)!;
  const [other, leaver] = h.workers.filter((w) => w !== host) as [SimWorker, SimWorker];
  h.svc.leave(leaver.workerId, { incarnation: leaver.incarnation, reason: 'agent shut down' });
  h.svc.tick();
  expect(h.liveRun().generation).toBe(2);
  const beat = (w: SimWorker) => h.svc.heartbeat(w.workerId, { incarnation: w.incarnation, progress: null }).instructions;
  return { h, host, other, beat };
}

describe('store handover on a relaunch', () => {
  it("the other member's start waits for the host's old launcher to exit", () => {
    const { h, host, other, beat } = relaunchOnSameHost();
    const hostSaw = beat(host);
    expect(hostSaw.map((i) => i.kind)).toEqual(['stop', 'start']);
    expect(starts(hostSaw)).toEqual([2]);
    // The other survivor is told to stop generation 1, but not yet to start 2: the old store still listens.
    expect(starts(beat(other))).toEqual([]);
    h.clock.advance(500);
    h.svc.tick();
    expect(starts(beat(other))).toEqual([]);
    // The host's generation-1 launcher is gone: the start goes out.
    h.svc.report(host.workerId, { incarnation: host.incarnation, reports: [{ type: 'exited', runId: h.liveRun().id, generation: 1, exitCode: null, signal: 15, requested: true }] });
    const plan = beat(other).find((i) => i.kind === 'start');
    expect(plan?.kind === 'start' && plan.plan).toMatchObject({ generation: 2, rdzvHost: false });
  });

  it("the host's start of the new generation releases it too: that launcher runs only once the old one exited", () => {
    const { h, host, other, beat } = relaunchOnSameHost();
    beat(host);
    expect(starts(beat(other))).toEqual([]);
    const runId = h.liveRun().id;
    const report = (type: 'started', generation: number) =>
      h.svc.report(host.workerId, { incarnation: host.incarnation, reports: [{ type, runId, generation, pid: 4242 }] });
    // A start report of the generation being replaced proves nothing about the old store.
    report('started', 1);
    expect(starts(beat(other))).toEqual([]);
    // The agent reports `exited` only after one more heartbeat; its `started` of generation 2 comes first.
    report('started', 2);
    expect(starts(beat(other))).toEqual([2]);
    // The late exit report changes nothing: the start went out once.
    h.svc.report(host.workerId, { incarnation: host.incarnation, reports: [{ type: 'exited', runId, generation: 1, exitCode: null, signal: 15, requested: true }] });
    expect(starts(beat(other))).toEqual([]);
  });

  it('goes out anyway after the bound when the exit report never comes', () => {
    const { h, host, other, beat } = relaunchOnSameHost();
    beat(host);
    expect(starts(beat(other))).toEqual([]);
    h.clock.advance(STORE_HANDOVER_MAX_MS - 100);
    h.svc.tick();
    expect(starts(beat(other))).toEqual([]);
    h.clock.advance(200);
    h.svc.tick();
    expect(starts(beat(other))).toEqual([2]);
  });

  it('holds nothing when the host has no old launcher (it already exited)', () => {
    const h = new Harness();
    h.activeWorkers('alpha', 'beta', 'gamma');
    h.svc.startRun(h.spec({ samples: 90, minWorkers: 2 }));
    h.run(2000);
    const host = h.workers.find((w) => w.running?.rdzvHost)!;
    const [other, leaver] = h.workers.filter((w) => w !== host) as [SimWorker, SimWorker];
    host.exit(null, 15); // its launcher ended on its own (a failure): no old store to wait for
    h.svc.leave(leaver.workerId, { incarnation: leaver.incarnation, reason: 'agent shut down' });
    h.run(3000, [host, other]);
    expect(h.liveRun().generation).toBeGreaterThanOrEqual(2);
    expect(other.running?.generation).toBe(h.liveRun().generation);
  });
});
