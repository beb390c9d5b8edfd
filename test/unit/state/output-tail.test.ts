// Each run's output tail: chunks keep their worker and node, consecutive ones merge, the oldest bytes go past
// the cap (cut on a character boundary), and output for a deleted run is dropped without failing the batch.
import { describe, expect, it } from 'vitest';
import { utf8Tail } from '../../../src-main/core/state/output-tail-repo';
import { storedRun } from './fixtures';
import { closeTemp, openTemp, tempDataDir } from './temp-state';

describe('output tail', () => {
  it('round-trips chunks from several workers, merging consecutive ones from the same worker', () => {
    const dir = tempDataDir();
    const first = openTemp(dir);
    first.runs.save(storedRun('run-1'));
    first.output.append('run-1', { workerId: 1, node: 'desk', data: 'step 1 ' });
    first.output.append('run-1', { workerId: 1, node: 'desk', data: 'loss 2.5\n' });
    first.output.append('run-1', { workerId: 2, node: 'jetson', data: '\u001b[31mTraceback\u001b[0m ü\n' });
    first.output.append('run-1', { workerId: 1, node: 'desk', data: '' });
    first.output.append('run-1', { workerId: 1, node: 'desk', data: 'step 2\n' });
    closeTemp(first);
    const db = openTemp(dir);
    expect(db.output.tail('run-1')).toEqual([
      { workerId: 1, node: 'desk', data: 'step 1 loss 2.5\n' },
      { workerId: 2, node: 'jetson', data: '\u001b[31mTraceback\u001b[0m ü\n' },
      { workerId: 1, node: 'desk', data: 'step 2\n' },
    ]);
    expect(db.output.tail('run-404')).toEqual([]);
  });

  it('keeps the last maxBytes of each run, trimming the oldest and cutting on a character boundary', () => {
    const db = openTemp(tempDataDir(), { limits: { maxOutputBytes: 100 } });
    db.runs.save(storedRun('run-1'));
    db.runs.save(storedRun('run-2'));
    for (let i = 0; i < 30; i++) {
      db.output.append('run-1', { workerId: i % 2, node: `n${i % 2}`, data: `line ${String(i).padStart(2, '0')} é\n` }); // 11 bytes
      db.flush();
    }
    db.output.append('run-2', { workerId: 1, node: 'n1', data: 'other run\n' });
    const text = db.output.tail('run-1').map((c) => c.data).join('');
    expect(db.output.bytes('run-1')).toBeLessThanOrEqual(100);
    expect(db.output.bytes('run-1')).toBeGreaterThan(90);
    expect(Buffer.byteLength(text)).toBe(db.output.bytes('run-1'));
    expect(text.endsWith('line 29 é\n')).toBe(true);
    expect(text).not.toContain('\ufffd');
    expect(text).not.toContain('line 20');
    expect(db.output.tail('run-2')).toEqual([{ workerId: 1, node: 'n1', data: 'other run\n' }]);
  });

  it('stores only the tail of one chunk larger than the cap', () => {
    const db = openTemp(tempDataDir(), { limits: { maxOutputBytes: 64 } });
    db.runs.save(storedRun('run-1'));
    db.output.append('run-1', { workerId: 1, node: 'n', data: `${'€'.repeat(100)}END` });
    const [chunk] = db.output.tail('run-1');
    expect(Buffer.byteLength(chunk!.data)).toBeLessThanOrEqual(64);
    expect(chunk!.data).toMatch(/^€+END$/);
  });

  it('drops output of a run deleted before the flush and keeps the rest of the batch', () => {
    const db = openTemp(tempDataDir(), { batch: { flushMs: 60_000 } });
    db.runs.save(storedRun('run-1'));
    db.runs.save(storedRun('run-2'));
    db.output.append('run-1', { workerId: 1, node: 'n', data: 'gone\n' });
    db.output.append('run-2', { workerId: 1, node: 'n', data: 'kept\n' });
    db.database.prepare('DELETE FROM runs WHERE id = ?').run('run-1'); // behind the writer's back
    db.flush();
    expect(db.output.tail('run-2')).toEqual([{ workerId: 1, node: 'n', data: 'kept\n' }]);
  });
});

describe('utf8Tail', () => {
  it('never starts inside a character', () => {
    expect(utf8Tail('aé€😀', 4)).toEqual({ data: '😀', bytes: 4 });
    expect(utf8Tail('aé€😀', 6)).toEqual({ data: '😀', bytes: 4 });
    expect(utf8Tail('aé€😀', 7)).toEqual({ data: '€😀', bytes: 7 });
    expect(utf8Tail('abc', 10)).toEqual({ data: 'abc', bytes: 3 });
  });
});
