// The report queue with progress reports: merged into few entries, kept when output overflows, bounded themselves,
// and batches that the coordinator's 1 MiB body limit accepts.
import { describe, expect, it } from 'vitest';
import { MAX_BUFFERED_OUTPUT_CHARS, ReportQueue } from '../../../src-main/agent/report-queue';
import { MAX_BODY_BYTES } from '../../../src-main/core/api/coordinator-http';
import { MAX_PROGRESS_POINTS } from '../../../src-shared/runs/progress-report';
import { reportRequestSchema, type Report } from '../../../src-shared/worker-protocol';

const ids = { runId: 'r', generation: 1 };
const out = (data: string): Report => ({ type: 'output', ...ids, data, progressSent: true });
const point = (step: number): Report => ({ type: 'progress', ...ids, points: [{ step, loss: 1 / (step + 1), rank: 0 }] });

function drain(q: ReportQueue): Report[][] {
  const batches: Report[][] = [];
  for (let b = q.nextBatch(); b; b = q.nextBatch()) {
    batches.push(b.reports);
    q.settle(b);
  }
  return batches;
}

const steps = (reports: Report[]) => reports.flatMap((r) => (r.type === 'progress' ? r.points.map((p) => p.step) : []));

describe('ReportQueue: progress reports', () => {
  it("merges a run's interleaved output and progress into one entry each, past each other but never past a lifecycle report", () => {
    const q = new ReportQueue();
    for (let step = 0; step < 700; step++) {
      q.push(out(`GPU_SHARE_PROGRESS {"step":${step}}\r\n`));
      q.push(point(step));
    }
    q.push({ type: 'exited', ...ids, exitCode: 0, signal: null, requested: false });
    q.push(point(700));
    q.push({ type: 'progress', runId: 'r', generation: 2, points: [{ step: 0 }] });
    const batch = q.take();
    expect(batch.map((r) => r.type)).toEqual(['output', 'progress', 'exited', 'progress', 'progress']);
    expect(steps(batch.slice(0, 2))).toEqual(Array.from({ length: 700 }, (_, i) => i));
    expect(steps(batch.slice(3, 4))).toEqual([700]);
    expect(batch[4]).toMatchObject({ generation: 2 });
  });

  it('splits progress into entries of at most MAX_PROGRESS_POINTS', () => {
    const q = new ReportQueue();
    for (let step = 0; step < MAX_PROGRESS_POINTS + 3; step++) q.push(point(step));
    const batch = q.take();
    expect(batch.map((r) => (r.type === 'progress' ? r.points.length : -1))).toEqual([MAX_PROGRESS_POINTS, 3]);
  });

  it('when output overflows its bound, output goes (with a note) and every progress point stays', () => {
    const q = new ReportQueue(2000);
    for (let step = 0; step < 5000; step++) {
      q.push(out(`[default0]:GPU_SHARE_PROGRESS {"step":${step},"loss":0.5}\r\n`));
      q.push(point(step));
    }
    const batches = drain(q);
    const all = batches.flat();
    expect(steps(all)).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    const text = all.map((r) => (r.type === 'output' ? r.data : '')).join('');
    expect(text.length).toBeLessThan(2200);
    expect(text).toMatch(/^\[gpu-share\] \d+ lines of output dropped while the coordinator was away\r\n/);
  });

  it('bounds buffered progress points too, dropping the oldest and saying how many steps the curve lost', () => {
    const q = new ReportQueue(MAX_BUFFERED_OUTPUT_CHARS, 10);
    for (let step = 0; step < 15; step++) q.push(point(step));
    expect(q.bufferedPoints).toBe(10);
    const batch = q.take();
    expect(batch[0]).toEqual(out('[gpu-share] 5 progress points (loss curve steps) dropped while the coordinator was away\r\n'));
    expect(steps(batch)).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    expect(q.bufferedPoints).toBe(0);
  });

  it('renumber puts the unanswered batch back, its points counted again', () => {
    const q = new ReportQueue();
    q.push(point(1));
    q.nextBatch();
    q.push(point(2));
    q.renumber();
    expect(q.bufferedPoints).toBe(2);
    expect(steps(q.nextBatch()!.reports)).toEqual([1, 2]);
  });

  it('every batch of a full buffer (output at its bound, thousands of points) fits the 1 MiB body limit and passes the schema', () => {
    const q = new ReportQueue();
    const line = `\u001b[32m[default0]:GPU_SHARE_PROGRESS {"step":1,"loss":0.123456789,"samples_per_sec":812.3}\u001b[0m\r\n`;
    for (let i = 0; i * line.length < MAX_BUFFERED_OUTPUT_CHARS; i++) {
      q.push(out(line));
      q.push({ type: 'progress', ...ids, points: [{ step: i, loss: 0.123456789012, samplesPerSec: 812.345678, rank: 0, worldSize: 2, totalSteps: 100000, resumedFrom: 0 }] });
    }
    const batches = drain(q);
    expect(batches.length).toBeGreaterThan(1);
    for (const reports of batches) {
      const body = JSON.stringify({ incarnation: 1, batchSeq: 1, reports });
      expect(Buffer.byteLength(body)).toBeLessThan(MAX_BODY_BYTES);
      expect(reportRequestSchema.safeParse(JSON.parse(body)).success).toBe(true);
    }
  });
});
