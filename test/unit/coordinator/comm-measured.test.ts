/**
 * What the trainer measured its communication to cost (`comm_s`) decides over the model: a blind start waits one
 * step for it, a measured cost above the model lengthens the local-sgd period, and a running generation whose
 * measured communication is over the budget re-decides — relaunching only when that pays for the relaunch.
 */
import { describe, expect, it } from 'vitest';
import { Harness, type SimWorker } from './harness';

/** Three members, alpha–beta fast, gamma behind 20 Mbit/s (RTT 0.3 ms). */
function setUp(): { h: Harness; ws: SimWorker[] } {
  const h = new Harness();
  const ws = h.activeWorkers('alpha', 'beta', 'gamma');
  for (const a of ws) {
    for (const b of ws) {
      if (a === b) continue;
      const mbps = a.node === 'gamma' || b.node === 'gamma' ? 20 : 940;
      h.svc.linkSurvey.book.record({ fromId: a.workerId, toId: b.workerId, from: a.node, to: b.node, mbps, rttMs: 0.3, measuredAt: h.clock.now() });
    }
  }
  return { h, ws };
}

/** One progress line of rank 0: 4 MB of gradients, 0.5 s of compute, and comm_s when given. */
function line(h: Harness, w: SimWorker, step: number, extra: Record<string, unknown> = {}): void {
  const plan = w.running!;
  const record = { step, loss: 1, rank: 0, world_size: 3, resumed_from: 0, grad_bytes: 4_000_000, compute_s: 0.5, comm: plan.env.GPU_SHARE_COMM, ...extra };
  h.svc.report(w.workerId, { incarnation: w.incarnation, reports: [{ type: 'output', runId: plan.runId, generation: plan.generation, data: `GPU_SHARE_PROGRESS ${JSON.stringify(record)}\n` }] });
}

// The ring model over 20 Mbit/s for 3 members: 2·2/3 · 32 Mbit / 20 Mbit/s + 4 × 0.3 ms = 2.1345 s per all-reduce.
const MODELLED_S = ((2 * 2) / 3) * 4e6 * 8 / 20e6 + 4 * 0.0003;

describe('comm decided from the measured cost', () => {
  it('a blind DDP start waits one step for comm_s, and a cost 15 % over the model lengthens the period', () => {
    const modelOnly = setUp();
    modelOnly.h.svc.startRun(modelOnly.h.spec({ samples: 90 }));
    modelOnly.h.run(1000);
    line(modelOnly.h, modelOnly.ws[0]!, 1); // no comm_s at all (a trainer of the user's own)
    modelOnly.h.run(2000);
    const modelled = modelOnly.h.liveRun().comm!;
    expect(modelled).toMatchObject({ strategy: 'local-sgd', generation: 2, localSgdPeriod: 39 });
    expect(modelled.reason).toContain('communication modelled');

    const { h, ws } = setUp();
    h.svc.startRun(h.spec({ samples: 90 }));
    h.run(1000);
    line(h, ws[0]!, 0);
    h.run(2000);
    expect(h.liveRun().generation).toBe(1); // waiting for the second step's comm_s
    line(h, ws[0]!, 1, { comm_s: 1.15 * MODELLED_S });
    h.run(2000);
    const measured = h.liveRun().comm!;
    // 2.455 s per average, 10 % of a 0.5 s step: every ceil(2.455 · 0.9 / 0.05) = 45 steps.
    expect(measured).toMatchObject({ strategy: 'local-sgd', generation: 2, localSgdPeriod: 45 });
    expect(measured.reason).toMatch(/measured 2\.45 s per ddp step \(modelled 2\.13 s: ×1\.15 applied to every strategy\)/);
  });

  it('a later run of the same trainer starts with the measured cost the earlier one took over the same link', () => {
    const { h, ws } = setUp();
    const first = h.svc.startRun(h.spec({ samples: 90 }));
    h.run(1000);
    line(h, ws[0]!, 1, { comm_s: 1.15 * MODELLED_S });
    h.run(2000);
    expect(h.liveRun().comm).toMatchObject({ generation: 2, localSgdPeriod: 45 });
    const second = h.stopThenStart(first.id, { samples: 90 });
    expect(second.comm).toMatchObject({ strategy: 'local-sgd', generation: 1, localSgdPeriod: 45 });
    expect(second.comm!.reason).toContain('measured 2.45 s per ddp step');
    expect(second.comm!.reason).toContain('as an earlier run of this trainer reported it');
  });

  it('an explicit ddp run\'s measured step serves a later auto run of the same trainer', () => {
    const { h, ws } = setUp();
    const explicit = h.svc.startRun(h.spec({ samples: 90, comm: 'ddp' }));
    h.run(1000);
    line(h, ws[0]!, 1, { comm_s: 1.15 * MODELLED_S });
    h.run(1000);
    expect(h.liveRun().comm).toMatchObject({ strategy: 'ddp', generation: 1 });
    expect(h.stopThenStart(explicit.id, { samples: 90 }).comm).toMatchObject({ strategy: 'local-sgd', generation: 1, localSgdPeriod: 45 });
  });

  it('a running local-sgd generation measured over 15 % of a step changes its period in place; one inside the band keeps it', () => {
    const { h, ws } = setUp();
    h.svc.startRun(h.spec({ samples: 90 }));
    h.run(1000);
    line(h, ws[0]!, 1);
    h.run(2000);
    expect(h.liveRun().comm).toMatchObject({ strategy: 'local-sgd', generation: 2, localSgdPeriod: 39 });
    // As the model said (within the budget): the same choice, and the reason now says it was measured.
    line(h, ws[0]!, 39, { comm_s: MODELLED_S });
    h.run(2000);
    expect(h.liveRun()).toMatchObject({ generation: 2, comm: { localSgdPeriod: 39 } });
    expect(h.liveRun().comm!.reason).toContain('measured 2.13 s per average (modelled 2.13 s: ×1.00');
    // Cheaper than modelled: a shorter period would fit the budget, but not the 6 % a shorter one needs: kept.
    h.run(20_000);
    line(h, ws[0]!, 40, { comm_s: 0.8 * MODELLED_S });
    h.run(2000);
    expect(h.liveRun()).toMatchObject({ generation: 2, comm: { localSgdPeriod: 39 } });
    expect(h.liveRun().comm!.reason).toContain('local-sgd every 39 steps kept: it spends 8.1 % of a step communicating, inside the 6.0 %–15.0 % band; afresh it would be local-sgd every 31 steps: DDP would spend');
    // Twice the model per average: 18 % of a step. The period changes in the running trainers: no relaunch.
    line(h, ws[0]!, 78, { comm_s: 2 * MODELLED_S });
    h.run(2000);
    const retuned = h.liveRun();
    expect(retuned.generation).toBe(2);
    expect(retuned.comm).toMatchObject({ strategy: 'local-sgd', localSgdPeriod: 77 });
    expect(retuned.commDecisions!.at(-1)!.reason).toMatch(/^local-sgd every 39 steps spends 18\.\d % of a step communicating, over 15\.0 %: local-sgd every 77 steps; the running trainer changes its period at its next average: .*measured 4\.27 s per average/);
    expect(h.eventMessages('comm-changed').at(-1)).toContain('(was local-sgd every 39 steps); told alpha, beta, gamma, no relaunch');
    expect(retuned.commDecisions!.map((d) => d.how)).toEqual(['launch', 'relaunch', 'kept', 'retune']);

    // Measured higher again at once: a decision stands 20 s before the next change.
    line(h, ws[0]!, 80, { comm_s: 4 * MODELLED_S });
    h.run(2000);
    expect(h.liveRun().comm).toMatchObject({ generation: 2, localSgdPeriod: 77 });
    expect(h.liveRun().comm!.reason).toMatch(/^local-sgd every 77 steps kept: decided \d+ s ago, under the 20 s a decision stands/);
    h.run(20_000);
    expect(h.liveRun().comm).toMatchObject({ generation: 2, localSgdPeriod: 154 }); // 8.54 s · 0.9 / 0.05
  });
});
