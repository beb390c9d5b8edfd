// The coordinator takes an agent's parsed progress reports for the loss curve instead of re-reading its output;
// an older agent's output is still read; one agent's lines never count twice.
import { describe, expect, it } from 'vitest';
import type { ProgressPoint } from '../../../src-shared/runs/progress-report';
import { Harness } from './harness';

const line = (step: number, loss: number) => `[default0]:GPU_SHARE_PROGRESS {"step":${step},"loss":${loss},"samples_per_sec":50,"rank":0,"world_size":2,"total_steps":300}\r\n`;

function setup() {
  const h = new Harness();
  const [a, b] = h.activeWorkers('a', 'b');
  const run = h.svc.startRun(h.spec());
  h.workers.forEach((w) => w.beat());
  const send = (w: typeof a, reports: Parameters<typeof h.svc.report>[1]['reports']) => h.svc.report(w!.workerId, { incarnation: w!.incarnation, reports });
  return { h, a, b, run, send };
}

describe('progress reports', () => {
  it('draws the curve from progress reports and keeps the output for the log; marked output is not read again', () => {
    const { h, a, b, run, send } = setup();
    const points: ProgressPoint[] = Array.from({ length: 100 }, (_, step) => ({ step, loss: 1 / (step + 1), samplesPerSec: 50, rank: 0, worldSize: 2, totalSteps: 300 }));
    // The output says other losses, and a step 500 no progress report names: read again, it would show.
    const text = points.map((p) => line(p.step, 9)).join('') + line(500, 9);
    send(a, [
      { type: 'output', runId: run.id, generation: 1, data: text, progressSent: true },
      { type: 'progress', runId: run.id, generation: 1, points },
    ]);
    h.run(1000, [a!, b!]);
    const snap = h.liveRun();
    expect(snap.lossHistory.map((p) => p.step)).toEqual([...Array(100).keys()]);
    expect(snap.lossHistory.every((p) => p.loss === 1 / (p.step + 1))).toBe(true);
    expect(snap.progress).toMatchObject({ step: 99, totalSteps: 300, samplesPerSec: 50 });
    expect(h.svc.runOutput(run.id)).toContain('GPU_SHARE_PROGRESS {"step":500');
  });

  it("an agent that sends only output (an older one) still gets its curve, and a newer one's reports beside it count once", () => {
    const { h, a, b, run, send } = setup();
    send(a, [{ type: 'output', runId: run.id, generation: 1, data: line(0, 0.5) + line(1, 0.25) }]);
    send(b, [
      { type: 'output', runId: run.id, generation: 1, data: line(1, 0.25).replace('"rank":0', '"rank":1') + line(2, 0.125).replace('"rank":0', '"rank":1'), progressSent: true },
      { type: 'progress', runId: run.id, generation: 1, points: [{ step: 1, loss: 0.25, rank: 1, samplesPerSec: 50 }, { step: 2, loss: 0.125, rank: 1, samplesPerSec: 50 }] },
    ]);
    h.run(1000, [a!, b!]);
    const snap = h.liveRun();
    expect(snap.lossHistory).toEqual([
      { step: 0, loss: 0.5, generation: 1 },
      { step: 1, loss: 0.25, generation: 1 },
      { step: 2, loss: 0.125, generation: 1 },
    ]);
    // Each worker's samples/s once (50 + 50), not b's twice.
    expect(snap.progress).toMatchObject({ step: 2, samplesPerSec: 100 });
  });

  it("takes the trainer's step figures from progress reports (the run's commStats)", () => {
    const { h, a, run, send } = setup();
    send(a, [{ type: 'progress', runId: run.id, generation: 1, points: [{ step: 0, loss: 2, rank: 0, gradBytes: 4_212_744, stepComputeS: 0.012, comm: 'ddp' }] }]);
    expect(h.liveRun().commStats).toEqual({ gradBytes: 4_212_744, stepComputeS: 0.012 });
  });
});
