// The progress report's wire shape: what a good agent sends passes; what a hostile or confused one sends is refused, field named.
import { describe, expect, it } from 'vitest';
import { MAX_PROGRESS_POINTS } from '../../../src-shared/runs/progress-report';
import { reportRequestSchema } from '../../../src-shared/worker-protocol';

const request = (report: Record<string, unknown>) => ({ incarnation: 1, batchSeq: 1, reports: [report] });
const progress = (points: unknown[], extra: Record<string, unknown> = {}) => request({ type: 'progress', runId: 'run-1', generation: 2, points, ...extra });

function refusal(body: unknown): string {
  const r = reportRequestSchema.safeParse(body);
  expect(r.success).toBe(false);
  return r.success ? '' : r.error.issues.map((i) => i.path.join('.')).join(' ');
}

describe('progress report schema', () => {
  it('accepts full points, minimal points, and output marked progressSent', () => {
    const full = { step: 3, rank: 0, totalSteps: 300, loss: 0.5, samplesPerSec: 812.5, worldSize: 2, shard: [0, 500], resumedFrom: 0, gradBytes: 4_212_744, stepComputeS: 0.0125, comm: 'local-sgd', commS: 0.21 };
    expect(reportRequestSchema.parse(progress([full, { step: 4 }, { step: 5, loss: null }])).reports[0]).toMatchObject({ points: [full, { step: 4 }, { step: 5, loss: null }] });
    expect(reportRequestSchema.safeParse(request({ type: 'output', runId: 'r', generation: 0, data: 'x', progressSent: true })).success).toBe(true);
    expect(reportRequestSchema.safeParse(progress(Array.from({ length: MAX_PROGRESS_POINTS }, (_, step) => ({ step })))).success).toBe(true);
  });

  it('says what the field must be', () => {
    const r = reportRequestSchema.safeParse(progress([{ step: 0 }, { step: 1, loss: 0.5, comm: 'gossip' }]));
    expect(r.success).toBe(false);
    if (!r.success) expect(r.error.issues[0]).toMatchObject({ path: ['reports', 0, 'points', 1, 'comm'], message: 'must be one of ddp, fp16, powersgd, local-sgd' });
  });

  it('refuses too many points, none, and bad numbers, naming the field', () => {
    expect(refusal(progress(Array.from({ length: MAX_PROGRESS_POINTS + 1 }, (_, step) => ({ step }))))).toContain('reports.0.points');
    expect(refusal(progress([]))).toContain('reports.0.points');
    expect(refusal(progress([{ step: -1 }]))).toContain('points.0.step');
    expect(refusal(progress([{ step: 1.5 }]))).toContain('points.0.step');
    expect(refusal(progress([{ step: 2 ** 60 }]))).toContain('points.0.step');
    expect(refusal(progress([{ step: 1, loss: Infinity }]))).toContain('points.0.loss');
    expect(refusal(progress([{ step: 1, samplesPerSec: -3 }]))).toContain('points.0.samplesPerSec');
    expect(refusal(progress([{ step: 1, gradBytes: 1.5 }]))).toContain('points.0.gradBytes');
    expect(refusal(progress([{ step: 1, stepComputeS: -0.1 }]))).toContain('points.0.stepComputeS');
    expect(refusal(progress([{ step: 1, comm: 'auto' }]))).toContain('points.0.comm');
    expect(refusal(progress([{ step: 1, commS: -0.01 }]))).toContain('points.0.commS');
    expect(refusal(progress([{ step: 1, commS: 3601 }]))).toContain('points.0.commS');
    expect(reportRequestSchema.safeParse(progress([{ step: 1, commS: 3600 }])).success).toBe(true);
    expect(refusal(progress([{ step: 1, worldSize: 0 }]))).toContain('points.0.worldSize');
    expect(refusal(progress([{ step: 1, shard: [5, 2] }]))).toContain('points.0.shard');
    expect(refusal(progress([{ step: 1, rank: 1_000_001 }]))).toContain('points.0.rank');
    for (const junk of [null, 'step', [1, 2], 7]) expect(refusal(progress([{ step: 0 }, junk]))).toBe('reports.0.points.1');
    expect(refusal(progress([{ step: 1 }], { runId: 'x'.repeat(201) }))).toContain('reports.0.runId');
    expect(refusal(progress([{ step: 1 }], { generation: -1 }))).toContain('reports.0.generation');
  });
});
