/** A burst of like notifications makes one alert now and one summary later, never one per notification. */
import { describe, expect, it } from 'vitest';
import { NotificationCoalescer } from '../../../src-main/core/coordinator/service/notification-coalescer';
import type { UserNotification } from '../../../src-shared/training';
import { FakeClock } from './fake-clock';

function setup(windowMs = 2000, maxKeysPerWindow?: number) {
  const clock = new FakeClock();
  const sent: UserNotification[] = [];
  const coalescer = new NotificationCoalescer({ clock, sink: (n) => sent.push(n), windowMs, ...(maxKeysPerWindow ? { maxKeysPerWindow } : {}) });
  return { clock, sent, coalescer };
}

let seq = 0;
function note(title: string, extra: Partial<UserNotification> = {}): UserNotification {
  return { id: `n${++seq}`, title, body: `${title}: details`, severity: 'warning', ...extra };
}

describe('NotificationCoalescer', () => {
  it('sends the first of a burst at once, and 1,000 residency failures as ONE summary', () => {
    const { clock, sent, coalescer } = setup();
    for (let pid = 1; pid <= 1000; pid++) {
      coalescer.push(note(`Run "demo" is not on the GPU on node-${pid}`, { severity: 'error', target: { view: 'runs', runId: 'r1' } }), 'residency:r1');
    }
    expect(sent).toHaveLength(1);
    expect(sent[0]!.title).toBe('Run "demo" is not on the GPU on node-1');
    expect(coalescer.pending).toBe(999);

    clock.advance(1999);
    expect(sent).toHaveLength(1);
    clock.advance(1);
    expect(sent).toHaveLength(2);
    const summary = sent[1]!;
    expect(summary.title).toBe('Run "demo" is not on the GPU on node-1000 …and 998 more');
    expect(summary.body).toContain('999 notifications like this within 2 s');
    expect(summary.severity).toBe('error');
    expect(summary.target).toEqual({ view: 'runs', runId: 'r1' });
    expect(coalescer.pending).toBe(0);

    clock.advance(10_000);
    expect(sent).toHaveLength(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keys by title when no group is given, and says how many times one title repeated', () => {
    const { clock, sent, coalescer } = setup();
    for (let i = 0; i < 5; i++) coalescer.push(note('Worker jetson failed'));
    coalescer.push(note('Run "a" finished', { severity: 'info' }));
    expect(sent.map((n) => n.title)).toEqual(['Worker jetson failed', 'Run "a" finished']);
    clock.advance(2000);
    expect(sent.map((n) => n.title)).toEqual(['Worker jetson failed', 'Run "a" finished', 'Worker jetson failed (4 more times)']);
  });

  it('sends a lone follower as itself, not as a summary of one', () => {
    const { clock, sent, coalescer } = setup();
    const first = note('Worker a failed');
    const second = note('Worker a failed', { body: 'second body' });
    coalescer.push(first);
    coalescer.push(second);
    clock.advance(2000);
    expect(sent).toEqual([first, second]);
  });

  it('lets a notification through at once after a quiet window', () => {
    const { clock, sent, coalescer } = setup();
    coalescer.push(note('Worker a failed'));
    clock.advance(2500);
    coalescer.push(note('Worker a failed'));
    expect(sent).toHaveLength(2);
  });

  it('makes one summary per window while a flood goes on, and stops when it does', () => {
    const { clock, sent, coalescer } = setup();
    // 10 notifications a second for 10 s: 100 in all.
    for (let i = 0; i < 100; i++) {
      coalescer.push(note('Residency failed', { severity: 'error' }));
      clock.advance(100);
    }
    clock.advance(4000);
    expect(sent.length).toBe(1 + 5);
    const counted = sent.slice(1).reduce((n, s) => n + Number(/\((\d+) more times\)/.exec(s.title)![1]), 0);
    expect(counted).toBe(99);
  });

  it('keeps the highest severity, and drops a target detail the held ones do not share', () => {
    const { clock, sent, coalescer } = setup();
    coalescer.push(note('x'), 'g');
    coalescer.push(note('a', { severity: 'info', target: { view: 'workers', workerId: 1 } }), 'g');
    coalescer.push(note('b', { severity: 'error', target: { view: 'workers', workerId: 2 } }), 'g');
    coalescer.push(note('c', { severity: 'warning', target: { view: 'workers', workerId: 3 } }), 'g');
    clock.advance(2000);
    expect(sent[1]).toMatchObject({ title: 'c …and 2 more', severity: 'error', target: { view: 'workers' } });
    expect(sent[1]!.target).not.toHaveProperty('workerId');
    expect(new Set(sent.map((n) => n.id)).size).toBe(sent.length);
  });

  it('bounds alerts when every notification has its own title (node names chosen by other machines)', () => {
    const { clock, sent, coalescer } = setup(2000, 5);
    for (let i = 0; i < 1000; i++) coalescer.push(note(`Worker node-${i} failed`, { severity: 'error' }));
    expect(sent).toHaveLength(5);
    clock.advance(2000);
    expect(sent).toHaveLength(6);
    expect(sent[5]!.title).toBe('Worker node-999 failed …and 994 more');
    expect(coalescer.pending).toBe(0);
  });

  it('flush sends what waits now; stop drops it and cancels every timer', () => {
    const a = setup();
    a.coalescer.push(note('w'));
    a.coalescer.push(note('w'));
    a.coalescer.push(note('w'));
    a.coalescer.flush();
    expect(a.sent).toHaveLength(2);
    expect(a.clock.pendingTimers()).toBe(0);

    const b = setup();
    b.coalescer.push(note('w'));
    b.coalescer.push(note('w'));
    b.coalescer.stop();
    b.clock.advance(5000);
    expect(b.sent).toHaveLength(1);
    expect(b.clock.pendingTimers()).toBe(0);
  });
});
