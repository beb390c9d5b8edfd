import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunLossCurve } from '../../../src-main/core/coordinator/runs/run-loss-curve';
import { RunTelemetry } from '../../../src-main/core/coordinator/runs/run-telemetry';

const T0 = Date.UTC(2026, 0, 1, 12);

/** A progress line as the example trainer prints it, as a pty delivers it (\r\n, torchrun's prefix). */
function line(fields: { step: number; loss?: number; rank?: number; sps?: number; resumed?: number; total?: number }): string {
  const record = {
    step: fields.step,
    total_steps: fields.total ?? 300,
    loss: fields.loss ?? 1 / (fields.step + 1),
    samples_per_sec: fields.sps ?? 100,
    rank: fields.rank ?? 0,
    world_size: 2,
    resumed_from: fields.resumed ?? 0,
  };
  return `[default0]:GPU_SHARE_PROGRESS ${JSON.stringify(record)}\r\n`;
}

function lines(from: number, to: number, extra: Omit<Parameters<typeof line>[0], 'step'> = {}): string {
  let out = '';
  for (let step = from; step < to; step++) out += line({ ...extra, step }) + `noise after step ${step}\r\n`;
  return out;
}

/** Cuts text into pieces at the given offsets (mid-line cuts included), as reports arrive. */
function cut(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

function telemetry(): { t: RunTelemetry; tick: (ms: number) => void } {
  let now = T0;
  const t = new RunTelemetry({ now: () => now });
  return { t, tick: (ms) => (now += ms) };
}

describe('RunTelemetry: the loss curve from every progress line', () => {
  it('a 300-step run on two workers draws 300 points, each step once, with rank 0 loss, whatever order the chunks come in', () => {
    const { t } = telemetry();
    t.onGeneration(1, [1, 2], T0, 'run started', (id) => (id === 1 ? 'alpha' : 'beta'));
    // beta (rank 1) prints a different loss for the same step; its output arrives in bigger, later batches.
    const alpha = cut(lines(0, 300, { rank: 0 }), 97);
    const beta = cut(lines(0, 300, { rank: 1, loss: 9 }), 1500);
    let b = 0;
    for (let a = 0; a < alpha.length; a++) {
      t.onOutput(1, 'alpha', 1, alpha[a]!);
      if (a % 20 === 19 && b < beta.length) t.onOutput(2, 'beta', 1, beta[b++]!);
    }
    while (b < beta.length) t.onOutput(2, 'beta', 1, beta[b++]!);
    const snap = t.snapshot();
    expect(snap.lossHistory).toHaveLength(300);
    expect(snap.lossHistory.map((p) => p.step)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(snap.lossHistory.every((p, i) => p.loss === 1 / (i + 1) && p.generation === 1)).toBe(true);
    expect(snap.progress).toMatchObject({ step: 299, totalSteps: 300, loss: 1 / 300, samplesPerSec: 200, resumedFrom: 0 });
    expect(snap.generationMarks).toEqual([{ generation: 1, step: 0, at: T0, cause: 'run started' }]);
  });

  it("prefers rank 0's loss even when another rank's copy of the step came first", () => {
    const { t } = telemetry();
    t.onGeneration(1, [1, 2], T0, 'run started');
    t.onOutput(2, 'beta', 1, line({ step: 0, rank: 1, loss: 5 }) + line({ step: 1, rank: 1, loss: 6 }));
    expect(t.snapshot().lossHistory.map((p) => p.loss)).toEqual([5, 6]);
    t.onOutput(1, 'alpha', 1, line({ step: 0, rank: 0, loss: 0.5 }) + line({ step: 1, rank: 0, loss: 0.6 }));
    t.onOutput(2, 'beta', 1, line({ step: 1, rank: 1, loss: 7 }));
    expect(t.snapshot().lossHistory.map((p) => p.loss)).toEqual([0.5, 0.6]);
    expect(t.snapshot().progress?.loss).toBe(0.6);
  });

  it('keeps a line split across chunks per worker: two workers cut mid-line do not mix', () => {
    const { t } = telemetry();
    t.onGeneration(1, [1, 2], T0, 'run started');
    const a = line({ step: 0, rank: 0 });
    const b = line({ step: 0, rank: 1, sps: 50 });
    t.onOutput(1, 'alpha', 1, a.slice(0, 30));
    t.onOutput(2, 'beta', 1, b.slice(0, 40));
    t.onOutput(1, 'alpha', 1, a.slice(30));
    t.onOutput(2, 'beta', 1, b.slice(40));
    const rows = t.snapshot().workerRows;
    expect(rows.map((r) => [r.node, r.step, r.samplesPerSec])).toEqual([
      ['alpha', 0, 100],
      ['beta', 0, 50],
    ]);
  });

  it('a generation resumed from a checkpoint replaces the points after it; its mark says where it began', () => {
    const { t, tick } = telemetry();
    t.onGeneration(1, [1, 2], T0, 'run started');
    t.onOutput(1, 'alpha', 1, lines(0, 58, { loss: 1 }));
    t.onWorkerFailed(2, 'beta', true);
    tick(5000);
    t.onGeneration(2, [1], T0 + 5000, 'worker beta failed');
    // Before gen 2 prints, its provisional mark sits where the curve stopped.
    expect(t.snapshot().generationMarks[1]).toEqual({ generation: 2, step: 58, at: T0 + 5000, cause: 'worker beta failed' });
    t.onOutput(1, 'alpha', 2, lines(50, 100, { loss: 2, resumed: 50 }));
    const snap = t.snapshot();
    expect(snap.lossHistory.map((p) => p.step)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(snap.lossHistory.filter((p) => p.generation === 1).map((p) => p.step).at(-1)).toBe(49);
    expect(snap.lossHistory.filter((p) => p.step >= 50).every((p) => p.loss === 2 && p.generation === 2)).toBe(true);
    expect(snap.generationMarks.map((m) => [m.generation, m.step])).toEqual([
      [1, 0],
      [2, 50],
    ]);
    expect(snap.progress).toMatchObject({ step: 99, resumedFrom: 50, samplesPerSec: 100 });
    expect(snap.workerFailures).toBe(1);
    expect(snap.workerRows.map((r) => [r.node, r.member, r.restartsCaused])).toEqual([
      ['alpha', true, 0],
      ['beta', false, 1],
    ]);
  });

  it("takes an old generation's late lines only until the new one has trained a step", () => {
    const { t } = telemetry();
    t.onGeneration(1, [1], T0, 'run started');
    t.onOutput(1, 'alpha', 1, lines(0, 10, { loss: 1 }));
    t.onGeneration(2, [1], T0 + 1, 'worker beta joined');
    t.onOutput(1, 'alpha', 1, lines(10, 12, { loss: 1 })); // finished its step after SIGTERM, checkpointed at 12
    expect(t.snapshot().lossHistory.at(-1)).toEqual({ step: 11, loss: 1, generation: 1 });
    t.onOutput(1, 'alpha', 2, lines(12, 14, { loss: 2, resumed: 12 }));
    t.onOutput(1, 'alpha', 1, lines(14, 16, { loss: 1 })); // late and stale now
    expect(t.snapshot().lossHistory.map((p) => `${p.step}:${p.generation}`).slice(-5)).toEqual(['9:1', '10:1', '11:1', '12:2', '13:2']);
  });

  it('a failure that cost no restart is counted on the way but not against the worker', () => {
    const { t } = telemetry();
    t.onGeneration(1, [1, 2], T0, 'run started');
    t.onWorkerFailed(2, 'beta', false);
    t.onWorkerFailed(2, 'beta', true);
    const snap = t.snapshot();
    expect(snap.workerFailures).toBe(2);
    expect(snap.workerRows.find((r) => r.workerId === 2)?.restartsCaused).toBe(1);
  });
  it("keeps when a worker's part ended: the failure's time, a leaver's generation start; none once it is back", () => {
    const { t } = telemetry();
    t.onGeneration(1, [1, 2, 3], T0, 'run started');
    t.onWorkerFailed(2, 'beta', true, T0 + 4000);
    t.onGeneration(2, [1, 3], T0 + 5000, 'worker beta failed');
    t.onGeneration(3, [1], T0 + 9000, 'gamma left');
    const ended = () => t.snapshot().workerRows.map((r) => [r.workerId, r.end, r.endedAt]);
    expect(ended()).toEqual([
      [1, null, undefined],
      [2, 'failed', T0 + 4000],
      [3, 'left', T0 + 9000],
    ]);
    t.onGeneration(4, [1, 3], T0 + 12_000, 'gamma back');
    expect(ended()[2]).toEqual([3, null, undefined]);
  });
});

describe('RunTelemetry: heartbeat progress as a fallback', () => {
  it('fills the curve and the row from heartbeats while output says nothing, and gives way to output lines', () => {
    const { t } = telemetry();
    t.onGeneration(1, [1], T0, 'run started', () => 'alpha');
    t.onHeartbeatProgress(1, 'alpha', { runId: 'r', generation: 1, step: 4, loss: 0.4, samplesPerSec: 80, resumedFrom: 0 });
    expect(t.snapshot().lossHistory).toEqual([{ step: 4, loss: 0.4, generation: 1 }]);
    expect(t.snapshot().workerRows[0]).toMatchObject({ node: 'alpha', step: 4, samplesPerSec: 80 });
    // The output of steps 0..5 arrives late: it fills the gaps and replaces the heartbeat's sample.
    t.onOutput(1, 'alpha', 1, lines(0, 6, { loss: 3, sps: 90 }));
    expect(t.snapshot().lossHistory.map((p) => [p.step, p.loss])).toEqual([0, 1, 2, 3, 4, 5].map((s) => [s, 3]));
    t.onHeartbeatProgress(1, 'alpha', { runId: 'r', generation: 1, step: 9, loss: 0.1, samplesPerSec: 999, resumedFrom: 0 });
    expect(t.snapshot().workerRows[0]).toMatchObject({ step: 5, samplesPerSec: 90 });
  });

  it('says "of N" from the first heartbeat that carries total_steps, before any progress report arrives', () => {
    const { t } = telemetry();
    t.onGeneration(1, [1], T0, 'run started', () => 'alpha');
    t.onHeartbeatProgress(1, 'alpha', { runId: 'r', generation: 1, step: 10, loss: 0.5, samplesPerSec: 40, resumedFrom: null, totalSteps: 400 });
    expect(t.progress()).toMatchObject({ step: 10, totalSteps: 400 });
    // An older agent leaves it out: the total already known stays.
    t.onHeartbeatProgress(1, 'alpha', { runId: 'r', generation: 1, step: 11, loss: 0.5, samplesPerSec: 40, resumedFrom: null });
    expect(t.progress()).toMatchObject({ step: 11, totalSteps: 400 });
  });

  it('sums samples/s over the ranks of one worker and over the members', () => {
    const { t } = telemetry();
    t.onGeneration(1, [1, 2], T0, 'run started');
    t.onOutput(1, 'alpha', 1, line({ step: 3, rank: 0, sps: 10 }) + line({ step: 3, rank: 1, sps: 20 }));
    t.onHeartbeatProgress(2, 'beta', { runId: 'r', generation: 1, step: 3, loss: null, samplesPerSec: 5, resumedFrom: null });
    expect(t.snapshot().workerRows.map((r) => r.samplesPerSec)).toEqual([30, 5]);
    expect(t.snapshot().progress?.samplesPerSec).toBe(35);
  });
});

describe('RunTelemetry: after a restart of the app', () => {
  it('carries on from what was saved: the resume is the next generation, its points replace the saved ones after it', () => {
    const { t } = telemetry();
    t.onGeneration(1, [1, 2], T0, 'run started', (id) => (id === 1 ? 'alpha' : 'beta'));
    t.onOutput(1, 'alpha', 1, lines(0, 30, { loss: 1 }));
    t.onWorkerFailed(2, 'beta', true);
    const saved = t.snapshot();

    const { t: again } = telemetry();
    again.restore(saved);
    expect(again.snapshot()).toMatchObject({ lossHistory: saved.lossHistory, generationMarks: saved.generationMarks, workerFailures: 1 });
    again.onGeneration(2, [1], T0 + 60_000, 'resumed after a restart of the app');
    again.onOutput(1, 'alpha', 2, lines(20, 25, { loss: 2, resumed: 20 }));
    const snap = again.snapshot();
    expect(snap.lossHistory.map((p) => p.step)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(snap.generationMarks.map((m) => [m.generation, m.step])).toEqual([
      [1, 0],
      [2, 20],
    ]);
    expect(snap.workerRows.map((r) => [r.node, r.restartsCaused, r.member])).toEqual([
      ['alpha', 0, true],
      ['beta', 1, false],
    ]);
  });
});

describe('RunTelemetry: bounds', () => {
  it('a long run keeps at most the cap, spread over every step', () => {
    const t = new RunTelemetry({ maxLossPoints: 100 });
    t.onGeneration(1, [1], T0, 'run started');
    for (let s = 0; s < 10_000; s += 100) t.onOutput(1, 'alpha', 1, lines(s, s + 100));
    const points = t.snapshot().lossHistory;
    expect(points.length).toBeLessThanOrEqual(100);
    expect(points.length).toBeGreaterThan(40);
    expect(points[0]!.step).toBe(0);
    expect(points.at(-1)!.step).toBeGreaterThan(9_800);
    expect(t.snapshot().progress?.step).toBe(9_999);
  });

  it('ignores malformed lines and does not throw on any input', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 4 }), fc.string())), (chunks) => {
        const t = new RunTelemetry();
        t.onGeneration(1, [1, 2], T0, 'run started');
        for (const [worker, gen, text] of chunks) t.onOutput(worker, `n${worker}`, gen, text);
        const snap = t.snapshot();
        const steps = snap.lossHistory.map((p) => p.step);
        expect([...steps].sort((a, b) => a - b)).toEqual(steps);
        expect(new Set(steps).size).toBe(steps.length);
      }),
    );
  });

  it('output any rank, any order, any cut: the curve is ordered, each step once', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 80 }), fc.integer({ min: 5, max: 400 }), (steps, size) => {
        const curve = new RunLossCurve(16);
        for (const s of steps) curve.add(1, s, s, s % 2 ? 'rank' : 'rank0');
        const got = curve.snapshot().map((p) => p.step);
        expect(got.length).toBeLessThanOrEqual(16);
        expect([...new Set(got)].sort((a, b) => a - b)).toEqual(got);
        const t = new RunTelemetry();
        t.onGeneration(1, [1], T0, 'run started');
        for (const piece of cut(steps.map((s) => line({ step: s })).join(''), size)) t.onOutput(1, 'alpha', 1, piece);
        expect(t.snapshot().lossHistory.map((p) => p.step)).toEqual([...new Set(steps)].sort((a, b) => a - b));
      }),
    );
  });
});
