/**
 * Issue 24 on the coordinator (fake clock, simulated agents that answer link probes): while a run trains, its
 * links stay measured and auto follows them. The link slows under DDP: the trainer's comm_s disputes the map,
 * the link is probed again and the run relaunches in local SGD; it slows further: the period changes in the
 * running trainers (comm-update, no relaunch); it is fast again: the training's own averages show it, and the
 * run goes back to DDP. Each decision is in the run's list with its time, how and why.
 */
import { describe, expect, it } from 'vitest';
import type { CommUpdateInstruction } from '../../../src-shared/runs/comm-control';
import { Harness, type SimWorker } from './harness';

const GRAD_BYTES = 3_000_000;
const COMPUTE_S = 0.1;

/** alpha and beta with probe ports; the link between them runs at `rate.mbps` (the test changes it). */
function setUp(): { h: Harness; ws: SimWorker[]; rate: { mbps: number } } {
  const h = new Harness();
  const rate = { mbps: 5400 };
  h.linkRate = () => rate.mbps;
  const ws = ['alpha', 'beta'].map((n, i) => h.worker(n, { probePort: 7000 + i }).join());
  ws.forEach((w) => w.beat());
  h.run(3000); // the join probes answered
  return { h, ws, rate };
}

/** Rank 0's progress line: the step figures and, when given, what communication cost (comm_s). */
function line(h: Harness, w: SimWorker, step: number, commS?: number): void {
  const plan = w.running!;
  const record = { step, loss: 1, rank: 0, world_size: 2, resumed_from: 0, grad_bytes: GRAD_BYTES, compute_s: COMPUTE_S, comm: plan.env.GPU_SHARE_COMM, ...(commS !== undefined ? { comm_s: commS } : {}) };
  h.svc.report(w.workerId, { incarnation: w.incarnation, reports: [{ type: 'output', runId: plan.runId, generation: plan.generation, data: `GPU_SHARE_PROGRESS ${JSON.stringify(record)}\n` }] });
}

/** One all-reduce of the model over two members at `mbps` (RTT 0.1 ms), as a trainer would time it. */
const roundS = (mbps: number) => (GRAD_BYTES * 8) / (mbps * 1e6) + 2 * 0.0001;

describe('communication follows the links while the run trains', () => {
  it('slows: probed on the evidence, relaunched in local SGD; slower: retuned in place; fast again: back to DDP', () => {
    const { h, ws, rate } = setUp();
    expect(h.svc.linkSurvey.links().map((l) => [l.mbps, l.source])).toEqual([[5400, 'probe'], [5400, 'probe']]);
    const run = h.svc.startRun(h.spec({ samples: 1000 }));
    h.run(1000);
    line(h, ws[0]!, 1, roundS(5400));
    h.run(2000);
    expect(h.liveRun()).toMatchObject({ generation: 1, comm: { strategy: 'ddp' } });
    // The training's figure agrees with the probe: the link is confirmed by training, its age restarts.
    expect(h.svc.linkSurvey.links().map((l) => l.source)).toEqual(['training', 'training']);

    // The link falls to 20 Mbit/s: a DDP step now spends 1.2 s communicating, ×260 the model for 5.4 Gbit/s.
    h.run(25_000);
    rate.mbps = 20;
    line(h, ws[0]!, 30, roundS(20));
    h.run(4000);
    expect(h.eventMessages('links-remeasured').at(-1)).toMatch(/the trainer's ddp step took 1\.20 s communicating, ×\d+\.\d the .* the model gives the 5\.4 Gbit\/s alpha–beta link/);
    expect(h.svc.linkSurvey.links().map((l) => [l.mbps, l.source])).toEqual([[20, 'probe'], [20, 'probe']]);
    const slow = h.liveRun();
    expect(slow).toMatchObject({ generation: 2, comm: { strategy: 'local-sgd' } });
    const period = slow.comm!.localSgdPeriod!;
    expect(slow.commDecisions!.map((d) => d.how)).toEqual(['launch', 'relaunch']);
    expect(slow.commDecisions![1]!.reason).toMatch(/^ddp spends \d+\.\d % of a step communicating, over 15\.0 %: local-sgd every \d+ steps; relaunching from the checkpoint saves about \d+ s over the 1000 steps left: DDP would spend/);

    // Slower still (8 Mbit/s): each average takes ×2.5 the model; the period grows in the running trainers.
    h.run(25_000);
    rate.mbps = 8;
    line(h, ws[0]!, period - 1, roundS(8));
    h.run(4000);
    const retuned = h.liveRun();
    expect(retuned.generation).toBe(2);
    expect(retuned.comm!.localSgdPeriod!).toBeGreaterThan(period * 2);
    expect(retuned.commDecisions!.at(-1)).toMatchObject({ how: 'retune', generation: 2, localSgdPeriod: retuned.comm!.localSgdPeriod });
    for (const w of ws) {
      const update = w.received.filter((i): i is CommUpdateInstruction => i.kind === 'comm-update').at(-1);
      expect(update).toMatchObject({ runId: run.id, generation: 2, seq: 1, strategy: 'local-sgd', localSgdPeriod: retuned.comm!.localSgdPeriod });
    }
    expect(h.eventMessages('comm-changed').at(-1)).toMatch(/told alpha, beta, no relaunch$/);

    // Fast again: the next average takes milliseconds, faster than 8 Mbit/s allows — recorded as a training
    // measurement and probed; DDP fits 6 % of a step again, and over 60 s of training is left: back to DDP.
    h.run(25_000);
    rate.mbps = 5400;
    line(h, ws[0]!, 2 * period, roundS(5400));
    h.run(4000);
    const back = h.liveRun();
    expect(back).toMatchObject({ generation: 3, comm: { strategy: 'ddp' } });
    expect(back.commDecisions!.map((d) => d.how)).toEqual(['launch', 'relaunch', 'retune', 'relaunch']);
    expect(back.commDecisions!.at(-1)!.reason).toMatch(/^ddp fits 6\.0 % of a step now/);
    for (const d of back.commDecisions!) expect(d.at).toBeGreaterThan(0);
  });

  it('a link that flaps within the band (×1.3 slower, then back) does not flap the decision', () => {
    const { h, ws, rate } = setUp();
    h.svc.startRun(h.spec({ samples: 1000 }));
    h.run(1000);
    rate.mbps = 20;
    h.svc.linkSurvey.remeasure(h.liveRun().workerIds, 0);
    h.run(3000);
    line(h, ws[0]!, 1);
    h.run(3000);
    const first = h.liveRun();
    expect(first.comm).toMatchObject({ strategy: 'local-sgd' });
    const period = first.comm!.localSgdPeriod!;
    // ×1.3 slower, then back, each figure within ×2 of the model (no probe) and inside the 6–15 % band: kept.
    for (const [i, factor] of [1.3, 1, 1.3, 1].entries()) {
      h.run(25_000);
      line(h, ws[0]!, period * (i + 1) - 1, roundS(20) * factor);
      h.run(2000);
      expect(h.liveRun().comm).toMatchObject({ generation: first.generation, localSgdPeriod: period });
    }
    expect(h.liveRun().commDecisions!.filter((d) => d.how !== 'kept').length).toBe(first.commDecisions!.length);
  });

  it('a training run\'s ring links are probed again once a minute old, and when a member\'s heartbeats slow', () => {
    const { h, ws, rate } = setUp();
    h.svc.startRun(h.spec({ samples: 1000 }));
    h.run(2000);
    const probes = () => ws[0]!.received.filter((i) => i.kind === 'measure-links').length + ws[1]!.received.filter((i) => i.kind === 'measure-links').length;
    const atStart = probes();
    h.run(50_000); // no comm_s at all: nothing confirms the links
    expect(probes()).toBe(atStart);
    rate.mbps = 100;
    h.run(15_000);
    expect(probes()).toBe(atStart + 2); // both directions, once each
    expect(h.svc.linkSurvey.links().map((l) => [l.mbps, l.source])).toEqual([[100, 'probe'], [100, 'probe']]);
    // beta's heartbeats stop for 4 s (over 3 intervals): its links are probed on that evidence.
    h.run(20_000);
    const before = probes();
    h.run(4000, [ws[0]!]);
    h.run(1000);
    expect(probes()).toBeGreaterThan(before);
    expect(h.eventMessages('links-remeasured').at(-1)).toMatch(/heartbeats from beta arrive over 3 intervals apart/);
  });
});
