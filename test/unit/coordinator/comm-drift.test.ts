/**
 * The drift bound on the coordinator (issue 24, item 3; fake clock, simulated agents): a local-SGD trainer that
 * reports its members drifting apart beyond the bound has its period shortened in place (comm-update, no
 * relaunch), and auto does not lengthen it past that again when the link slows further. A local-SGD launch asks
 * the trainer for the post-local-SGD warm-up.
 */
import { describe, expect, it } from 'vitest';
import type { CommUpdateInstruction } from '../../../src-shared/runs/comm-control';
import { LOCAL_SGD_WARMUP_STEPS } from '../../../src-shared/scheduling/drift-bound';
import { Harness, type SimWorker } from './harness';

const GRAD_BYTES = 3_000_000;
const COMPUTE_S = 0.1;

/** Rank 0's progress line, with what an average cost (comm_s) and the drift it removed, when given. */
function line(h: Harness, w: SimWorker, step: number, extra: Record<string, number> = {}): void {
  const plan = w.running!;
  const record = { step, loss: 1, rank: 0, world_size: 2, resumed_from: 0, grad_bytes: GRAD_BYTES, compute_s: COMPUTE_S, comm: plan.env.GPU_SHARE_COMM, ...extra };
  h.svc.report(w.workerId, { incarnation: w.incarnation, reports: [{ type: 'output', runId: plan.runId, generation: plan.generation, data: `GPU_SHARE_PROGRESS ${JSON.stringify(record)}\n` }] });
}

const roundS = (mbps: number) => (GRAD_BYTES * 8) / (mbps * 1e6) + 2 * 0.0001;
const updates = (w: SimWorker) => w.received.filter((i): i is CommUpdateInstruction => i.kind === 'comm-update');

describe('the drift bound holds a running local-SGD period', () => {
  it('drift over 2 % shortens the period in place and caps it; a slower link then cannot lengthen it', () => {
    const h = new Harness();
    const rate = { mbps: 20 };
    h.linkRate = () => rate.mbps;
    const ws = ['alpha', 'beta'].map((n, i) => h.worker(n, { probePort: 7000 + i }).join());
    ws.forEach((w) => w.beat());
    h.run(3000);
    h.svc.startRun(h.spec({ samples: 1000 }));
    h.run(1000);
    line(h, ws[0]!, 1);
    h.run(3000);
    const first = h.liveRun();
    expect(first.comm).toMatchObject({ strategy: 'local-sgd' });
    const period = first.comm!.localSgdPeriod!;
    expect(period).toBeGreaterThan(2);
    expect(ws[0]!.running!.env.GPU_SHARE_LOCAL_SGD_WARMUP).toBe(String(LOCAL_SGD_WARMUP_STEPS));

    // A warm-up average (grown over one step) is not judged, however large.
    line(h, ws[0]!, 5, { comm_s: roundS(20), drift: 0.5, drift_steps: 1 });
    h.run(2000);
    expect(h.liveRun().comm!.localSgdPeriod).toBe(period);

    // 3.1 % over a whole period: halved (or shorter) in the running trainers, saying why.
    line(h, ws[0]!, 200, { comm_s: roundS(20), drift: 0.031, drift_steps: period });
    h.run(2000);
    const shortened = h.liveRun();
    const next = shortened.comm!.localSgdPeriod!;
    expect(next).toBe(Math.min(Math.floor(period / 2), Math.floor((period * 0.02) / 0.031)));
    expect(shortened.generation).toBe(first.generation);
    expect(shortened.commDecisions!.at(-1)).toMatchObject({ how: 'retune', localSgdPeriod: next, reason: `period ${period} → ${next}: drift 3.1 % over the 2 % bound (at step 200)` });
    for (const w of ws) expect(updates(w).at(-1)).toMatchObject({ generation: first.generation, strategy: 'local-sgd', localSgdPeriod: next });
    expect(h.eventMessages('comm-changed').at(-1)).toMatch(/drift 3\.1 % over the 2 % bound .*no relaunch$/);

    // The link slows to 8 Mbit/s: auto would lengthen the period (×2.5 the cost per average), but not past the cap.
    h.run(25_000);
    rate.mbps = 8;
    line(h, ws[0]!, 300, { comm_s: roundS(8), drift: 0.01, drift_steps: next });
    h.run(30_000);
    const held = h.liveRun();
    expect(held.comm!.localSgdPeriod!).toBeLessThanOrEqual(next);
    expect(held.comm!.reason).toMatch(/held at every \d+ steps, the period the members' drift/);
    for (const w of ws) expect(updates(w).every((u) => u.localSgdPeriod <= period)).toBe(true);
  });
});
