/**
 * The coordinator's comm decision through the whole service (harness): a run starts blind in plain DDP, relaunches
 * with a strategy that sends less once its trainer reported a step and the links are measured, and a changed
 * link matrix changes the strategy at the next generation.
 */
import { describe, expect, it } from 'vitest';
import type { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { Harness, type SimWorker } from './harness';

function measure(svc: CoordinatorService, h: Harness, ws: SimWorker[], mbps: (a: string, b: string) => number): void {
  for (const a of ws) {
    for (const b of ws) {
      if (a === b) continue;
      svc.linkSurvey.book.record({ fromId: a.workerId, toId: b.workerId, from: a.node, to: b.node, mbps: mbps(a.node, b.node), rttMs: 0.3, measuredAt: h.clock.now() });
    }
  }
}

/** A progress line with the figures the trainers print in their first steps: 4 MB of gradients, 0.5 s of compute. */
function stepLine(h: Harness, w: SimWorker): void {
  const plan = w.running!;
  const record = { step: 1, loss: 1, samples_per_sec: 10, rank: 0, world_size: 3, grad_bytes: 4_000_000, compute_s: 0.5, comm: plan.env.GPU_SHARE_COMM };
  h.svc.report(w.workerId, { incarnation: w.incarnation, reports: [{ type: 'output', runId: plan.runId, generation: plan.generation, data: `GPU_SHARE_PROGRESS ${JSON.stringify(record)}\n` }] });
}

describe('comm decided by the coordinator, generation by generation', () => {
  it('relaunches a blind DDP start with local-sgd over a 20 Mbit/s link, and goes back to DDP when the slow member leaves', () => {
    const h = new Harness();
    const ws = h.activeWorkers('alpha', 'beta', 'gamma');
    const [a, b, c] = ws;
    const run = h.svc.startRun(h.spec({ samples: 90 }));
    h.run(1000);
    expect(a!.running?.env.GPU_SHARE_COMM).toBe('ddp');
    expect(h.liveRun().comm).toMatchObject({ strategy: 'ddp', generation: 1, commShare: null });

    stepLine(h, a!);
    const slow = (x: string, y: string) => (x === 'gamma' || y === 'gamma' ? 20 : 940);
    measure(h.svc, h, ws, slow);
    h.run(2000);
    const relaunched = h.liveRun();
    expect(relaunched.generation).toBe(2);
    expect(relaunched.comm).toMatchObject({ requested: 'auto', strategy: 'local-sgd', generation: 2 });
    const period = String(relaunched.comm!.localSgdPeriod);
    for (const w of ws) expect(w.running?.env).toMatchObject({ GPU_SHARE_COMM: 'local-sgd', GPU_SHARE_LOCAL_SGD_PERIOD: period, GPU_SHARE_GENERATION: '2' });
    expect(h.svc.runOutput(run.id)).toContain(`generation 2 trains with local-sgd every ${period} steps: DDP would spend`);
    expect(h.eventMessages('comm-changed')).toEqual([expect.stringContaining('(was ddp)')]);
    expect(relaunched.restartsUsed).toBe(0);

    // gamma leaves: the two left are joined at 940 Mbit/s and the next generation trains plain DDP again.
    h.svc.leave(c!.workerId, { incarnation: c!.incarnation, reason: 'agent shut down' });
    h.run(2000, [a!, b!]);
    const after = h.liveRun();
    expect(after.generation).toBe(3);
    expect(after.comm).toMatchObject({ strategy: 'ddp', generation: 3 });
    expect(a!.running?.env.GPU_SHARE_COMM).toBe('ddp');
    expect(a!.running?.env.GPU_SHARE_LOCAL_SGD_PERIOD).toBeUndefined();
  });

  it('a later run of the same trainer is not decided blind: its first generation goes by the step the earlier run reported', () => {
    const h = new Harness();
    const ws = h.activeWorkers('alpha', 'beta', 'gamma');
    measure(h.svc, h, ws, (x, y) => (x === 'gamma' || y === 'gamma' ? 20 : 940));
    const first = h.svc.startRun(h.spec({ samples: 90 }));
    h.run(1000);
    expect(h.liveRun().comm).toMatchObject({ strategy: 'ddp', generation: 1, commShare: null }); // blind: never seen
    stepLine(h, ws[0]!);
    h.run(2000);
    expect(h.liveRun().comm).toMatchObject({ strategy: 'local-sgd', generation: 2 });

    const second = h.stopThenStart(first.id, { samples: 90 });
    expect(second).toMatchObject({ generation: 1, restartsUsed: 0 });
    expect(second.comm).toMatchObject({ strategy: 'local-sgd', generation: 1 });
    expect(second.comm!.commShare).not.toBeNull();
    expect(second.comm!.reason).toContain('as an earlier run of this trainer reported it');
    expect(ws[0]!.running?.env.GPU_SHARE_COMM).toBe('local-sgd');

    // Another command line (another model size) is another trainer: blind again.
    expect(h.stopThenStart(second.id, { samples: 90, command: ['train.py', '--hidden', '4096'] }).comm).toMatchObject({ strategy: 'ddp', generation: 1, commShare: null });
  });

  it('a link measured again mid-generation changes the choice: the next generation trains with it', () => {
    const h = new Harness();
    const ws = h.activeWorkers('alpha', 'beta', 'gamma');
    measure(h.svc, h, ws, () => 940);
    h.svc.startRun(h.spec({ samples: 90 }));
    h.run(1000);
    stepLine(h, ws[0]!);
    h.run(1000);
    expect(h.liveRun().comm).toMatchObject({ strategy: 'ddp', generation: 1 });
    expect(h.liveRun().comm!.reason).toContain('940 Mbit/s');

    h.clock.advance(60_000);
    measure(h.svc, h, ws, (x, y) => (x === 'beta' || y === 'beta' ? 20 : 940));
    h.run(2000);
    const after = h.liveRun();
    expect(after).toMatchObject({ generation: 2, restartsUsed: 0 });
    expect(after.comm).toMatchObject({ strategy: 'local-sgd', generation: 2 });
    for (const w of ws) expect(w.running?.env.GPU_SHARE_COMM).toBe('local-sgd');
  });

  it('orders the ring by the links without relaunching when a re-plan finds the same members', () => {
    const h = new Harness();
    const ws = h.activeWorkers('alpha', 'beta', 'gamma', 'delta');
    // alpha–gamma and beta–delta are the fast pairs; join order would cross the 10 Mbit/s diagonals twice.
    const fast = new Set(['alpha-gamma', 'gamma-alpha', 'beta-delta', 'delta-beta']);
    const diag = new Set(['alpha-delta', 'delta-alpha', 'beta-gamma', 'gamma-beta']);
    measure(h.svc, h, ws, (x, y) => (fast.has(`${x}-${y}`) ? 1000 : diag.has(`${x}-${y}`) ? 10 : 100));
    h.svc.startRun(h.spec({ samples: 100, maxWorkers: 8 }));
    h.run(1000);
    const ranks = Object.fromEntries(ws.map((w) => [w.node, w.running?.env.GPU_SHARE_NODE_RANK]));
    expect(ranks).toEqual({ alpha: '0', gamma: '1', delta: '2', beta: '3' });
    expect(h.liveRun().shardHistory.at(-1)!.shards.map((s) => s.node)).toEqual(['alpha', 'gamma', 'delta', 'beta']);
    // A worker that cannot train it joins: the run is re-planned, finds the same members, and keeps its generation.
    h.worker('nas', { python: false }).join().beat();
    h.run(3000, ws);
    expect(h.liveRun().generation).toBe(1);
  });
});
