// The trainer's other numbers on its progress lines (issue 25, "Any metric"): every finite numeric field the
// coordinator does not read itself is a metric, within bounds (16 names, 40 characters); a run keeps a curve
// per name like its loss curve, and a progress report's metrics are checked like its other fields.
import { describe, expect, it } from 'vitest';
import { parseProgressLine } from '../../../src-main/platform/runs/progress-line';
import { RunMetrics } from '../../../src-main/core/coordinator/runs/run-metrics';
import { RunTelemetry } from '../../../src-main/core/coordinator/runs/run-telemetry';
import { MAX_METRIC_NAME_CHARS, MAX_RUN_METRICS, extractMetrics } from '../../../src-shared/runs/progress-metrics';
import { reportRequestSchema } from '../../../src-shared/worker-protocol';

const progressLine = (record: Record<string, unknown>) => `GPU_SHARE_PROGRESS ${JSON.stringify(record)}`;

describe('metric extraction', () => {
  it('takes every other finite number of a progress line, not the fields the coordinator reads', () => {
    const line = progressLine({ step: 3, loss: 0.5, samples_per_sec: 800, rank: 0, world_size: 2, lr: 1e-4, eval_loss: 0.61, 'eval/acc': 0.9, grad_norm: 2.5, compute_s: 0.01, comm: 'ddp', drift: 0.1 });
    expect(parseProgressLine(line)?.metrics).toEqual({ lr: 1e-4, eval_loss: 0.61, 'eval/acc': 0.9, grad_norm: 2.5 });
    expect(parseProgressLine(progressLine({ step: 3, loss: 0.5 }))?.metrics).toBeNull();
  });

  it('leaves out what is not a finite number or not a plain short name', () => {
    const long = 'x'.repeat(MAX_METRIC_NAME_CHARS + 1);
    const ok = 'y'.repeat(MAX_METRIC_NAME_CHARS);
    const record = { step: 1, text: 'hi', flag: true, nested: { a: 1 }, list: [1], none: null, [long]: 1, [ok]: 2, 'has space': 3, '9lives': 4, 'lr<script>': 5, big: 1e308 };
    expect(extractMetrics(record)).toEqual({ [ok]: 2, big: 1e308 });
    // JSON has no NaN or Infinity: a trainer printing Python's NaN writes a line that is not JSON, skipped whole.
    expect(parseProgressLine('GPU_SHARE_PROGRESS {"step":1,"lr":NaN}')).toBeNull();
  });

  it(`keeps at most ${MAX_RUN_METRICS} names from one line`, () => {
    const record: Record<string, unknown> = { step: 0 };
    for (let i = 0; i < 40; i++) record[`m${i}`] = i;
    const metrics = extractMetrics(record)!;
    expect(Object.keys(metrics)).toHaveLength(MAX_RUN_METRICS);
    expect(metrics.m0).toBe(0);
  });
});

describe('a progress report\'s metrics', () => {
  const request = (points: unknown[]) => ({ incarnation: 1, batchSeq: 1, reports: [{ type: 'progress', runId: 'run-1', generation: 1, points }] });
  it('are accepted when named finite numbers, refused otherwise with the field named', () => {
    expect(reportRequestSchema.safeParse(request([{ step: 1, metrics: { lr: 0.01, eval_loss: 0.5 } }])).success).toBe(true);
    const tooMany = Object.fromEntries(Array.from({ length: MAX_RUN_METRICS + 1 }, (_, i) => [`m${i}`, i]));
    for (const metrics of [{ lr: 'x' }, { 'a b': 1 }, tooMany, [1], { loss: 1 }]) {
      const r = reportRequestSchema.safeParse(request([{ step: 1, metrics }]));
      expect(r.success).toBe(false);
      if (!r.success) expect(r.error.issues[0]!.path).toEqual(['reports', 0, 'points', 0, 'metrics']);
    }
  });
});

describe('a run\'s metric curves', () => {
  it(`keep the first ${MAX_RUN_METRICS} names a run printed, each thinned at the loss curve's cap`, () => {
    const m = new RunMetrics(100);
    for (let step = 0; step < 1000; step++) {
      const metrics: Record<string, number> = { lr: 0.01, [`late${step}`]: step };
      m.add(1, step, metrics, 'rank0');
    }
    const series = m.snapshot();
    expect(series).toHaveLength(MAX_RUN_METRICS);
    expect(series.map((s) => s.name)).toContain('lr');
    expect(series.map((s) => s.name)).not.toContain('late999');
    const lr = series.find((s) => s.name === 'lr')!;
    expect(lr.points.length).toBeLessThanOrEqual(100);
    expect(lr.points[0]!.step).toBe(0);
    expect(lr.points.at(-1)!.step).toBeGreaterThan(900);
  });

  it('come from output lines and progress reports, rank 0 preferred, a resumed generation replacing what it trained over', () => {
    const t = new RunTelemetry({ now: () => 0 });
    t.onGeneration(1, [1, 2], 0, 'run started');
    let out = '';
    for (let step = 0; step < 10; step++) out += `[default0]:${progressLine({ step, loss: 1, rank: 0, lr: 0.1, ...(step % 5 === 4 ? { eval_loss: step } : {}) })}\r\n`;
    t.onOutput(1, 'alpha', 1, out);
    t.onProgress(2, 'beta', 1, [{ step: 3, rank: 1, metrics: { lr: 99 } }]);
    t.onGeneration(2, [1], 1000, 'worker beta failed');
    t.onProgress(1, 'alpha', 2, [{ step: 6, rank: 0, resumedFrom: 6, metrics: { lr: 0.05 } }]);
    const { metrics } = t.snapshot();
    expect(metrics.map((s) => s.name)).toEqual(['eval_loss', 'lr']);
    const lr = metrics.find((s) => s.name === 'lr')!.points;
    expect(lr.map((p) => [p.step, p.value, p.generation])).toEqual([[0, 0.1, 1], [1, 0.1, 1], [2, 0.1, 1], [3, 0.1, 1], [4, 0.1, 1], [5, 0.1, 1], [6, 0.05, 2]]);
    expect(metrics.find((s) => s.name === 'eval_loss')!.points.map((p) => p.step)).toEqual([4]);
  });
});
