// The trainer's measured comm_s survives a coordinator restart (issue 16's known limit): the run's first decision
// after the restart goes by the remembered figure, as its reason says, instead of the model alone. Real SQLite files.
import { describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../../src-shared/training';
import type { Harness, SimWorker } from './harness';
import { restartable } from './restartable';

const { dataDir, coordinatorOn } = restartable('gs-measured-');

/** alpha–beta fast, gamma behind 20 Mbit/s (RTT 0.3 ms), as the link survey would measure them. */
function links(h: Harness, ws: SimWorker[]): void {
  for (const a of ws) {
    for (const b of ws) {
      if (a === b) continue;
      const mbps = a.node === 'gamma' || b.node === 'gamma' ? 20 : 940;
      h.svc.linkSurvey.book.record({ fromId: a.workerId, toId: b.workerId, from: a.node, to: b.node, mbps, rttMs: 0.3, measuredAt: h.clock.now() });
    }
  }
}

/** Rank 0's progress line: 4 MB of gradients, 0.5 s of compute, and comm_s when given. */
function line(h: Harness, w: SimWorker, step: number, extra: Record<string, unknown> = {}): void {
  const plan = w.running!;
  const record = { step, loss: 1, rank: 0, world_size: 3, resumed_from: 0, grad_bytes: 4_000_000, compute_s: 0.5, comm: plan.env.GPU_SHARE_COMM, ...extra };
  h.svc.report(w.workerId, { incarnation: w.incarnation, reports: [{ type: 'output', runId: plan.runId, generation: plan.generation, data: `GPU_SHARE_PROGRESS ${JSON.stringify(record)}\n` }] });
}

const MODELLED_S = ((2 * 2) / 3) * 4e6 * 8 / 20e6 + 4 * 0.0003;

/** A run on alpha, beta and gamma whose trainer measured comm_s 15 % over the model (it relaunches as local-sgd every 45). */
function measuredRun(h: Harness): RunSnapshot {
  const ws = h.activeWorkers('alpha', 'beta', 'gamma');
  links(h, ws);
  const run = h.svc.startRun(h.spec({ samples: 90, maxRestarts: 5 }));
  h.run(1000);
  line(h, ws[0]!, 1, { comm_s: 1.15 * MODELLED_S });
  h.run(2000);
  return h.svc.runs().find((r) => r.id === run.id)!;
}

describe("the trainer's measured comm_s across a restart", () => {
  it("is kept with the run, and auto's first decision after the restart goes by it", () => {
    const dir = dataDir();
    const { h: first } = coordinatorOn(dir);
    const run = measuredRun(first);
    const before = first.liveRun();
    expect(before.comm).toMatchObject({ strategy: 'local-sgd', generation: 2, localSgdPeriod: 45 });
    expect(before.commMeasured).toMatchObject({ strategy: 'ddp', generation: 1, mbps: 20 });

    // SIGKILL, and a coordinator on the same file: its links are measured afresh, its workers come back without their training.
    const { h: second } = coordinatorOn(dir);
    expect(second.svc.runs().find((r) => r.id === run.id)!.commMeasured).toEqual(before.commMeasured);
    const back = ['alpha', 'beta', 'gamma'].map((n) => second.worker(n).join());
    links(second, back);
    back.forEach((w) => w.beat());
    second.run(3000);
    const after = second.liveRun();
    expect(after.generation).toBeGreaterThan(2);
    expect(after.comm).toMatchObject({ strategy: 'local-sgd', generation: after.generation, localSgdPeriod: 45 });
    expect(after.comm!.reason).toMatch(/measured 2\.45 s per ddp step \(modelled 2\.13 s: ×1\.15 applied to every strategy\)/);
    expect(after.comm!.reason).not.toContain('earlier run');
  });

  it('a later run of the same trainer, started after the restart, begins with the figure the kept run measured', () => {
    const dir = dataDir();
    const { h: first } = coordinatorOn(dir);
    first.svc.stopRun(measuredRun(first).id);
    first.run(2000);

    const { h: second } = coordinatorOn(dir);
    const back = second.activeWorkers('alpha', 'beta', 'gamma');
    links(second, back);
    const again = second.svc.startRun(second.spec({ samples: 90 }));
    second.run(1000);
    const comm = second.svc.runs().find((r) => r.id === again.id)!.comm!;
    expect(comm).toMatchObject({ strategy: 'local-sgd', generation: 1, localSgdPeriod: 45 });
    expect(comm.reason).toContain('measured 2.45 s per ddp step');
    expect(comm.reason).toContain('as an earlier run of this trainer reported it');
  });

  it('a damaged kept figure is dropped: the run starts and decides from the model', () => {
    const dir = dataDir();
    const { h: first, db } = coordinatorOn(dir);
    const run = measuredRun(first);
    const key = `run-comm:${run.id}`;
    const row = db.kv.get<Record<string, unknown>>(key)!;
    db.kv.set(key, { ...row, commMeasured: { generation: 1, strategy: 'carrier-pigeon', seconds: -1, mbps: 0, rttMs: null } });
    const { h: second } = coordinatorOn(dir);
    expect(second.svc.runs().find((r) => r.id === run.id)!.commMeasured ?? null).toBeNull();
  });
});
