// The batched writer: batched writes wait for the timer, the byte threshold, the next acknowledged write or
// read, or close; a failed timed flush is reported, not thrown into a timer; a closed database refuses writes.
import { describe, expect, it } from 'vitest';
import { storedRun } from './fixtures';
import { openTemp, tempDataDir } from './temp-state';

function rawOutputRows(db: ReturnType<typeof openTemp>): number {
  return (db.database.prepare('SELECT count(*) AS n FROM run_output').get() as { n: number }).n;
}

describe('BatchedWriter', () => {
  it('flushes batched writes after flushMs', async () => {
    const db = openTemp(tempDataDir(), { batch: { flushMs: 30 } });
    db.runs.save(storedRun('run-1'));
    db.output.append('run-1', { workerId: 1, node: 'n', data: 'x\n' });
    expect(rawOutputRows(db)).toBe(0);
    await new Promise((r) => setTimeout(r, 120));
    expect(rawOutputRows(db)).toBe(1);
  });

  it('flushes at once past maxBytes', () => {
    const db = openTemp(tempDataDir(), { batch: { flushMs: 60_000, maxBytes: 1000 } });
    db.runs.save(storedRun('run-1'));
    db.output.append('run-1', { workerId: 1, node: 'n', data: 'a'.repeat(999) });
    expect(rawOutputRows(db)).toBe(0);
    db.output.append('run-1', { workerId: 2, node: 'm', data: 'b' });
    expect(rawOutputRows(db)).toBe(2);
  });

  it('writes what was batched before an acknowledged write, in the same call', () => {
    const db = openTemp(tempDataDir(), { batch: { flushMs: 60_000 } });
    db.runs.save(storedRun('run-1'));
    db.output.append('run-1', { workerId: 1, node: 'n', data: 'before the event\n' });
    db.events.append({ seq: 1, at: 1, kind: 'run-started', severity: 'info', message: 'started' });
    expect(rawOutputRows(db)).toBe(1);
  });

  it('reports a failed timed flush to onError and carries on', async () => {
    const errors: unknown[] = [];
    const db = openTemp(tempDataDir(), { batch: { flushMs: 20, onError: (e) => errors.push(e) } });
    db.runs.save(storedRun('run-1'));
    db.database.exec("CREATE TRIGGER refuse BEFORE INSERT ON run_output BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
    db.output.append('run-1', { workerId: 1, node: 'n', data: 'lost\n' });
    await new Promise((r) => setTimeout(r, 100));
    expect(String(errors[0])).toContain('disk says no');
    db.database.exec('DROP TRIGGER refuse');
    db.output.append('run-1', { workerId: 1, node: 'n', data: 'kept\n' });
    expect(db.output.tail('run-1')).toEqual([{ workerId: 1, node: 'n', data: 'kept\n' }]);
  });

  it('refuses writes once closed', () => {
    const db = openTemp();
    db.close();
    expect(() => db.kv.set('a', 1)).toThrow(/closed/);
    db.close(); // twice is fine
  });
});
