import { beforeEach, describe, expect, it } from 'vitest';
import type { UserNotification } from '../../../src-shared/training';
import { createElectronNotifier } from '../../../src-main/electron/notifier';
import { Notification, resetElectronMock } from '../../mocks/electron';

const failure: UserNotification = {
  id: 'n1',
  title: 'Worker jetson failed',
  body: 'No heartbeat for 5 s. 2 workers left, shards rebalanced.',
  severity: 'error',
  target: { view: 'workers', workerId: 4 },
};

function setup() {
  const log: string[] = [];
  const focused: unknown[] = [];
  const marks: (string | null)[] = [];
  const notifier = createElectronNotifier({
    showWindow: () => log.push('show'),
    focusTarget: (target) => focused.push(target),
    tray: { setAttention: (m) => marks.push(m) },
  });
  return { notifier, log, focused, marks };
}

beforeEach(() => resetElectronMock());

describe('Electron notifier', () => {
  it('shows a native notification with the title and body', () => {
    const { notifier } = setup();
    notifier.notify(failure);
    expect(Notification.instances).toHaveLength(1);
    const shown = Notification.instances[0]!;
    expect(shown.shown).toBe(true);
    expect([shown.title, shown.body]).toEqual([failure.title, failure.body]);
    expect(shown.options.urgency).toBe('critical');
  });

  it('on click shows the window and sends onFocus with the target', () => {
    const { notifier, log, focused } = setup();
    notifier.notify(failure);
    expect(log).toEqual([]);
    Notification.instances[0]!.fakeClick();
    expect(log).toEqual(['show']);
    expect(focused).toEqual([{ view: 'workers', workerId: 4 }]);
  });

  it('without a target, a click only shows the window', () => {
    const { notifier, log, focused } = setup();
    notifier.notify({ id: 'n2', title: 'Added this machine', body: 'Node "desktop" is in x.', severity: 'info' });
    Notification.instances[0]!.fakeClick();
    expect(log).toEqual(['show']);
    expect(focused).toEqual([]);
  });

  it('marks the tray for warnings and errors, not for information', () => {
    const { notifier, marks } = setup();
    notifier.notify({ ...failure, severity: 'info' });
    expect(marks).toEqual([]);
    notifier.notify({ ...failure, severity: 'warning', title: 'Run r1 paused', body: 'Only 1 of 2 workers active.' });
    notifier.notify(failure);
    expect(marks).toEqual(['Run r1 paused: Only 1 of 2 workers active.', `${failure.title}: ${failure.body}`]);
  });

  it('still marks the tray where the system has no notifications', () => {
    Notification.supported = false;
    const { notifier, marks } = setup();
    notifier.notify(failure);
    expect(Notification.instances).toHaveLength(0);
    expect(marks).toHaveLength(1);
  });
});
