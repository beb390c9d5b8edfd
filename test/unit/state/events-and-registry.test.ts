// Events (seq order, pruning past the cap), the worker registry (machine hash, state, batched heartbeat
// times), node-name bindings and the counters: each round-trips through a reopened file.
import { describe, expect, it } from 'vitest';
import { COUNTERS, storedToSnapshot } from '../../../src-main/core/state/index';
import { event, registered } from './fixtures';
import { closeTemp, openTemp, tempDataDir } from './temp-state';

describe('events', () => {
  it('round-trips events with and without their optional fields, in seq order', () => {
    const dir = tempDataDir();
    const first = openTemp(dir);
    const events = [
      event(1),
      event(2, { kind: 'worker-failed', severity: 'error', message: 'Worker jetson failed: no heartbeat for 5.2 s', workerId: 2, runId: 'run-1', generation: 1 }),
      event(3, { kind: 'run-restarted', severity: 'warning', runId: 'run-1', generation: 2, node: 'vm' }),
      event(4, { kind: 'job-finished', jobId: 'a'.repeat(64), node: 'jetson' }),
    ];
    events.forEach((e) => first.events.append(e));
    closeTemp(first);
    const db = openTemp(dir);
    expect(db.events.recent()).toEqual(events);
    expect(db.events.recent(3)).toEqual(events.slice(1));
    expect(db.events.after(1)).toEqual(events.slice(1));
    expect(db.events.forRun('run-1')).toEqual(events.slice(1, 3));
    expect(db.events.lastSeq()).toBe(4);
    expect(() => db.events.append(event(3))).toThrow(/UNIQUE|PRIMARY KEY/);
  });

  it('keeps the newest events past the cap (at most a tenth over it between prunes)', () => {
    const db = openTemp(tempDataDir(), { limits: { maxEvents: 100 } });
    for (let seq = 1; seq <= 1000; seq++) db.events.append(event(seq));
    const kept = db.events.recent(10_000);
    expect(kept.length).toBeGreaterThanOrEqual(100);
    expect(kept.length).toBeLessThanOrEqual(110);
    expect(kept.at(-1)!.seq).toBe(1000);
    expect(kept.map((e) => e.seq)).toEqual(Array.from({ length: kept.length }, (_, i) => 1001 - kept.length + i));
    expect(db.events.lastSeq()).toBe(1000);
  });
});

describe('worker registry', () => {
  it('round-trips workers, their state changes and heartbeat times', () => {
    const dir = tempDataDir();
    const first = openTemp(dir, { batch: { flushMs: 60_000 } });
    const a = registered(1);
    const b = registered(2, { node: 'this-box', local: true, gpus: [], backend: 'cpu', address: null, incarnation: 3 });
    first.workers.save(a);
    first.workers.save(b);
    first.workers.setState(1, 'failed', 'no heartbeat for 5.1 s');
    first.workers.touch(2, 1_700_000_009_000);
    first.workers.touch(2, 1_700_000_008_000); // an older time never wins
    closeTemp(first); // the batched heartbeat is flushed on close
    const db = openTemp(dir);
    expect(db.workers.list()).toEqual([{ ...a, state: 'failed', stateCause: 'no heartbeat for 5.1 s' }, { ...b, lastHeartbeatAt: 1_700_000_009_000 }]);
    expect(db.workers.listSnapshots().map((w) => [w.id, w.state, w.step])).toEqual([
      [1, 'failed', null],
      [2, 'active', null],
    ]);
    db.workers.remove(1);
    expect(db.workers.get(1)).toBeNull();
    expect(db.workers.get(2)!.incarnation).toBe(3);
  });

  it('restores a worker as a WorkerSnapshot with no progress and no machine hash', () => {
    const snap = storedToSnapshot(registered(4));
    expect(snap).toMatchObject({ id: 4, node: 'node-4', step: null, loss: null, samplesPerSec: null });
    expect('machineHash' in snap).toBe(false);
  });
});

describe('node names', () => {
  it('binds a name to the first machine that used it and keeps it after the worker is gone', () => {
    const dir = tempDataDir();
    const first = openTemp(dir);
    first.workers.save(registered(1, { node: 'desk', machineHash: 'hash-A' }));
    expect(first.nodeNames.bind({ node: 'desk', machineHash: 'hash-A', firstFrom: '10.0.0.5', boundAt: 1 })).toEqual({ node: 'desk', machineHash: 'hash-A', firstFrom: '10.0.0.5', boundAt: 1 });
    // A second machine asking for the name gets the binding in force, not its own.
    expect(first.nodeNames.bind({ node: 'desk', machineHash: 'hash-B', firstFrom: '10.0.0.9', boundAt: 2 }).machineHash).toBe('hash-A');
    first.workers.remove(1);
    closeTemp(first);
    const db = openTemp(dir);
    expect(db.nodeNames.get('desk')!.machineHash).toBe('hash-A');
    db.nodeNames.forget('desk');
    expect(db.nodeNames.list()).toEqual([]);
  });
});

describe('counters and settings', () => {
  it('counts up across reopenings, raises but never lowers, and stores settings as JSON', () => {
    const dir = tempDataDir();
    const first = openTemp(dir);
    expect(first.kv.counter(COUNTERS.workerId)).toBe(0);
    expect(first.kv.next(COUNTERS.workerId)).toBe(1);
    expect(first.kv.next(COUNTERS.workerId)).toBe(2);
    expect(first.kv.raise(COUNTERS.eventSeq, 40)).toBe(40);
    expect(first.kv.raise(COUNTERS.eventSeq, 7)).toBe(40);
    first.kv.set('ui.lastView', { view: 'runs', runId: 'run-1' });
    closeTemp(first);
    const db = openTemp(dir);
    expect(db.kv.next(COUNTERS.workerId)).toBe(3);
    expect(db.kv.counter(COUNTERS.eventSeq)).toBe(40);
    expect(db.kv.get('ui.lastView')).toEqual({ view: 'runs', runId: 'run-1' });
    db.kv.delete('ui.lastView');
    expect(db.kv.get('ui.lastView')).toBeUndefined();
    expect(() => db.kv.set('x', undefined)).toThrow(/kv.delete/);
  });
});
