import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { UserNotification } from '../../../src-shared/training';
import {
  addThisMachineAndNotify,
  createAppTray,
  TRAY_TOOLTIP,
  trayIconPath,
  trayTooltip,
} from '../../../src-main/electron/tray';
import { resetElectronMock, Tray } from '../../mocks/electron';

const iconDir = path.resolve('assets/tray');

function makeTray(platform: NodeJS.Platform = 'linux') {
  const clicked: string[] = [];
  const appTray = createAppTray({
    iconDir,
    platform,
    onShow: () => clicked.push('show'),
    onAddThisMachine: () => clicked.push('add'),
    onQuit: () => clicked.push('quit'),
  });
  return { appTray, tray: Tray.instances.at(-1)!, clicked };
}

beforeEach(() => resetElectronMock());

describe('tray', () => {
  it('has Show GPU Share, Add this machine and Quit, each doing its job', () => {
    const { tray, clicked } = makeTray();
    const menu = tray.contextMenu!;
    expect(menu.items.map((i) => i.label ?? i.type)).toEqual(['Show GPU Share', 'Add this machine', 'separator', 'Quit']);
    menu.fakeClick('Show GPU Share');
    menu.fakeClick('Add this machine');
    menu.fakeClick('Quit');
    tray.emit('click');
    expect(clicked).toEqual(['show', 'add', 'quit', 'show']);
  });

  it('starts with the normal icon, which exists on disk for every platform, and the plain tooltip', () => {
    for (const platform of ['linux', 'darwin', 'win32'] as const) {
      for (const attention of [false, true]) {
        const file = trayIconPath(iconDir, platform, attention);
        expect(existsSync(file), file).toBe(true);
        expect(existsSync(file.replace(/\.png$/, '@2x.png')), file).toBe(true);
      }
    }
    const { tray } = makeTray('linux');
    expect(tray.image.path).toBe(path.join(iconDir, 'tray-32.png'));
    expect(tray.image.isEmpty()).toBe(false);
    expect(tray.toolTip).toBe(TRAY_TOOLTIP);
    expect(makeTray('darwin').tray.image.path).toBe(path.join(iconDir, 'tray.png'));
  });

  it('setAttention switches to the attention icon with the message as tooltip, and null switches back', () => {
    const { appTray, tray } = makeTray('win32');
    appTray.setAttention('Worker jetson failed — no heartbeat for 5 s. 2 workers left, shards rebalanced.');
    expect(tray.image.path).toBe(path.join(iconDir, 'tray-attention.png'));
    expect(tray.toolTip).toBe('GPU Share — Worker jetson failed — no heartbeat for 5 s. 2 workers left, shards rebalanced.');
    expect(appTray.attention).toContain('Worker jetson failed');
    appTray.setAttention(null);
    expect(tray.image.path).toBe(path.join(iconDir, 'tray.png'));
    expect(tray.toolTip).toBe(TRAY_TOOLTIP);
    appTray.setAttention('   ');
    expect(appTray.attention).toBeNull();
    appTray.destroy();
    expect(tray.isDestroyed()).toBe(true);
    expect(() => appTray.setAttention('after destroy')).not.toThrow();
  });

  it('keeps tooltips within the 127 characters Windows shows, on one line', () => {
    const long = `Run r1 paused:\n${'only 1 of 2 workers active. '.repeat(10)}`;
    const tip = trayTooltip(long);
    expect(tip.length).toBe(127);
    expect(tip.endsWith('…')).toBe(true);
    expect(tip).not.toContain('\n');
  });
});

describe('Add this machine from the tray', () => {
  const state = { path: '/home/u/.config/GPU Share/cluster.yaml' } as never;

  it('notifies what was added or updated', async () => {
    const notes: UserNotification[] = [];
    const notifier = { notify: (n: UserNotification) => notes.push(n) };
    await addThisMachineAndNotify(async () => ({ state, action: 'added', nodeName: 'desktop' }), notifier);
    await addThisMachineAndNotify(async () => ({ state, action: 'updated', nodeName: 'desktop' }), notifier);
    expect(notes.map((n) => [n.severity, n.title, n.body])).toEqual([
      ['info', 'Added this machine', 'Node "desktop" is now in /home/u/.config/GPU Share/cluster.yaml.'],
      ['info', 'This machine is already in the cluster', `It is node "desktop" in /home/u/.config/GPU Share/cluster.yaml: nothing was added; its entry was updated from this machine's hardware.`],
    ]);
  });

  it('notifies a failure with its message instead of throwing', async () => {
    const notes: UserNotification[] = [];
    await expect(
      addThisMachineAndNotify(
        async () => {
          throw new Error('/etc/gpu-share/cluster.yaml: permission denied.');
        },
        { notify: (n) => notes.push(n) },
      ),
    ).resolves.toBeUndefined();
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ severity: 'error', title: 'Could not add this machine' });
    expect(notes[0]!.body).toContain('/etc/gpu-share/cluster.yaml: permission denied.');
  });
});
