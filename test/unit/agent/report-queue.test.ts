import { describe, expect, it } from 'vitest';
import { MAX_BATCH_CHARS, MAX_OUTPUT_ENTRY_CHARS, ReportQueue } from '../../../src-main/agent/report-queue';

const ids = { runId: 'r', generation: 1 };

describe('ReportQueue', () => {
  it('merges consecutive output of one run and keeps lifecycle reports in order', () => {
    const q = new ReportQueue();
    q.push({ type: 'started', ...ids, pid: 42 });
    q.push({ type: 'output', ...ids, data: 'a' });
    q.push({ type: 'output', ...ids, data: 'b' });
    q.push({ type: 'output', runId: 'r', generation: 2, data: 'c' });
    q.push({ type: 'exited', ...ids, exitCode: 0, signal: null, requested: false });
    q.push({ type: 'output', ...ids, data: '' });
    expect(q.take()).toEqual([
      { type: 'started', ...ids, pid: 42 },
      { type: 'output', ...ids, data: 'ab' },
      { type: 'output', runId: 'r', generation: 2, data: 'c' },
      { type: 'exited', ...ids, exitCode: 0, signal: null, requested: false },
    ]);
    expect(q.isEmpty()).toBe(true);
  });

  it('splits output into entries the protocol accepts, and a batch holds no more than MAX_BATCH_CHARS of them', () => {
    const q = new ReportQueue(10 * MAX_OUTPUT_ENTRY_CHARS);
    q.push({ type: 'output', ...ids, data: 'x'.repeat(MAX_OUTPUT_ENTRY_CHARS * 3 + 5) });
    const lengths = (batch: ReturnType<ReportQueue['take']>) => batch.map((r) => (r.type === 'output' ? r.data.length : -1));
    expect(lengths(q.take())).toEqual([MAX_OUTPUT_ENTRY_CHARS, MAX_OUTPUT_ENTRY_CHARS]);
    expect(lengths(q.take())).toEqual([MAX_OUTPUT_ENTRY_CHARS, 5]);
    expect(2 * MAX_OUTPUT_ENTRY_CHARS).toBeLessThanOrEqual(MAX_BATCH_CHARS);
  });

  it('bounds buffered output by dropping the oldest whole lines, never an exit, and says how many lines were dropped', () => {
    const q = new ReportQueue(100);
    const a = 'a'.repeat(9) + '\n';
    const b = 'b'.repeat(9) + '\n';
    q.push({ type: 'output', ...ids, data: a.repeat(8) });
    q.push({ type: 'exited', ...ids, exitCode: 1, signal: null, requested: false });
    q.push({ type: 'output', ...ids, data: b.repeat(6) });
    const batch = q.take();
    const outputs = batch.filter((r) => r.type === 'output').map((r) => (r.type === 'output' ? r.data : ''));
    expect(batch.some((r) => r.type === 'exited')).toBe(true);
    expect(outputs.join('')).toBe(`[gpu-share] 4 lines of output dropped while the coordinator was away\r\n${a.repeat(4)}${b.repeat(6)}`);
  });

  it('drops a line the bound cuts into whole, so no line (a progress line least of all) arrives without its head', () => {
    const q = new ReportQueue(20);
    q.push({ type: 'output', ...ids, data: 'step=1 loss=0.5\nstep=2 loss=0.4\n' });
    const out = q.take().map((r) => (r.type === 'output' ? r.data : '')).join('');
    expect(out).toBe('[gpu-share] 1 line of output dropped while the coordinator was away\r\nstep=2 loss=0.4\n');
  });

  it('renumber keeps everything for a re-attached session, the unanswered batch first, numbered from 1 again', () => {
    const q = new ReportQueue();
    q.push({ type: 'output', ...ids, data: 'before the restart\n' });
    expect(q.nextBatch()!.seq).toBe(1);
    q.push({ type: 'output', ...ids, data: 'while away\n' });
    expect(q.nextBatch()!.seq).toBe(1); // unanswered: the coordinator died with it
    q.renumber();
    const batch = q.nextBatch()!;
    expect(batch.seq).toBe(1);
    expect(batch.reports).toEqual([{ type: 'output', ...ids, data: 'before the restart\n' }, { type: 'output', ...ids, data: 'while away\n' }]);
    q.settle(batch);
    expect(q.isEmpty()).toBe(true);
  });

  it('hands out an unanswered batch again with the same number and contents until it is settled', () => {
    const q = new ReportQueue();
    q.push({ type: 'started', ...ids, pid: 1 });
    q.push({ type: 'output', ...ids, data: 'first' });
    const batch = q.nextBatch()!;
    expect(batch.seq).toBe(1);
    q.push({ type: 'output', ...ids, data: 'later' }); // must not be merged into the batch in flight
    expect(q.nextBatch()).toEqual({ seq: 1, reports: [{ type: 'started', ...ids, pid: 1 }, { type: 'output', ...ids, data: 'first' }] });
    q.settle(batch);
    expect(q.nextBatch()).toEqual({ seq: 2, reports: [{ type: 'output', ...ids, data: 'later' }] });
    expect(q.isEmpty()).toBe(false); // batch 2 still waits for its answer
    q.settle(q.nextBatch()!);
    expect(q.isEmpty()).toBe(true);
    expect(q.nextBatch()).toBeNull();
    q.clear();
    q.push({ type: 'started', ...ids, pid: 2 });
    expect(q.nextBatch()!.seq).toBe(1);
  });

  it('takes at most one request worth at a time', () => {
    const q = new ReportQueue();
    for (let i = 0; i < 7; i++) q.push({ type: 'started', ...ids, pid: i + 1 });
    expect(q.take(5)).toHaveLength(5);
    expect(q.size).toBe(2);
  });
});
