import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { events, requests } from '../../../src-shared/ipc';
import type { AppCoreOptions } from '../../../src-main/app/app-core-types';
import type { PtySpawner } from '../../../src-main/platform/ports';
import { APP_PAGE_URL } from '../../../src-main/electron/app-protocol';
import { createPreloadApi } from '../../../src-main/electron/preload-api';
import { startShell, type ShellDeps } from '../../../src-main/electron/shell';
import { parseShellArgs } from '../../../src-main/electron/shell-args';
import {
  app,
  BrowserWindow,
  dialog,
  FakeWebContents,
  ipcMain,
  ipcRenderer,
  Notification,
  protocol,
  resetElectronMock,
  session,
  Tray,
} from '../../mocks/electron';
import { createFakeCore, type FakeCore } from './fake-core';

const pty: PtySpawner = {
  spawn() {
    throw new Error('the shell never spawns by itself');
  },
};

let core: FakeCore;
let coreOptions: AppCoreOptions | null;

function deps(overrides: Partial<ShellDeps> = {}): ShellDeps {
  return {
    createCore: async (options) => {
      coreOptions = options;
      return core;
    },
    pty,
    argv: ['/opt/electron', '.'],
    cwd: '/home/u/work',
    platform: 'linux',
    env: {},
    ...overrides,
  };
}

async function started(overrides: Partial<ShellDeps> = {}) {
  const shell = await startShell(deps(overrides));
  if (!shell) throw new Error('shell did not start');
  const window = shell.window() as unknown as BrowserWindow;
  return { shell, window, tray: Tray.instances.at(-1)! };
}

beforeEach(() => {
  resetElectronMock();
  app.setPath('userData', '/home/u/.config/GPU Share');
  app.fakeReady();
  core = createFakeCore();
  coreOptions = null;
});

describe('start-up', () => {
  it('gives way to a running instance: quits without starting a core', async () => {
    app.singleInstanceLock = false;
    const createCore = vi.fn();
    await expect(startShell(deps({ createCore }))).resolves.toBeNull();
    expect(createCore).not.toHaveBeenCalled();
    expect(app.quitRequested).toBe(1);
    expect(BrowserWindow.instances).toHaveLength(0);
  });

  it('creates the core with Electron ports, userData and --cluster from argv', async () => {
    const { shell } = await started({ argv: ['/opt/electron', '.', '--cluster', 'lab/cluster.yaml'] });
    expect(coreOptions).toMatchObject({
      userData: '/home/u/.config/GPU Share',
      clusterPath: path.resolve('/home/u/work', 'lab/cluster.yaml'),
      pty,
    });
    expect(coreOptions!.notifier).toBe(shell.notifier);
    expect(typeof coreOptions!.tray?.setAttention).toBe('function');
  });

  it('uses GPU_SHARE_HOME for the core data when set, like the CLI does', async () => {
    await started({ env: { GPU_SHARE_HOME: '/srv/cluster-b' } });
    expect(coreOptions!.userData).toBe('/srv/cluster-b');
    expect(coreOptions!.clusterPath).toBeUndefined();
  });

  it('serves the page over app://, hardens the session, binds every channel, opens the window and the tray', async () => {
    const { window, tray } = await started();
    expect(protocol.isProtocolHandled('app')).toBe(true);
    expect(session.defaultSession.headersListener).not.toBeNull();
    expect(session.defaultSession.permissionRequestHandler).not.toBeNull();
    expect(ipcMain.handlers.size).toBe(Object.keys(requests).length);
    expect(window.loaded).toEqual({ kind: 'url', target: APP_PAGE_URL });
    expect(window.options.webPreferences.preload).toBe(path.join(app.getAppPath(), 'dist', 'main', 'preload.cjs'));
    expect(tray.contextMenu!.items.map((i) => i.label).filter(Boolean)).toEqual(['Show GPU Share', 'Add this machine', 'Quit']);

    ipcRenderer.fakeAttach(window.webContents);
    const api = createPreloadApi(ipcRenderer as never);
    await expect(api.getCluster()).resolves.toEqual({ echo: 'getCluster', arg: undefined });
  });

  it('guards web contents created later too', async () => {
    await started();
    const later = new FakeWebContents();
    app.emit('web-contents-created', {}, later);
    expect(later.simulateNavigation('https://example.com/')).toBe(true);
    expect(later.simulateWindowOpen('https://example.com/')).toEqual({ action: 'deny' });
  });

  it('explains a core that cannot start, and exits', async () => {
    await expect(
      startShell(deps({ createCore: async () => Promise.reject(new Error('port 7421 on 127.0.0.1 is in use: close the other GPU Share')) })),
    ).resolves.toBeNull();
    expect(dialog.errorBoxes).toEqual([
      { title: 'GPU Share could not start', content: 'port 7421 on 127.0.0.1 is in use: close the other GPU Share' },
    ]);
    expect(app.exitCode).toBe(1);
    expect(Tray.instances.at(-1)!.isDestroyed()).toBe(true);
  });
});

describe('tray and notifications', () => {
  it('tray Add this machine calls the core handler and notifies the result', async () => {
    core.override('addThisMachine', async () => ({
      state: { path: '/home/u/.config/GPU Share/cluster.yaml' } as never,
      action: 'added',
      nodeName: 'desktop',
    }));
    const { tray } = await started();
    tray.contextMenu!.fakeClick('Add this machine');
    await vi.waitFor(() => expect(Notification.instances.map((n) => n.title)).toContain('Added this machine'));
    expect(core.calls).toEqual([{ method: 'addThisMachine', arg: undefined }]);
  });

  it('a failure notification marks the tray; clicking it shows the window at its target and clears the mark', async () => {
    const { window, tray } = await started();
    const page = (() => {
      ipcRenderer.fakeAttach(window.webContents);
      return createPreloadApi(ipcRenderer as never);
    })();
    const focus: unknown[] = [];
    page.onFocus((t) => focus.push(t));
    expect(window.isVisible()).toBe(false);

    // As the core does on a worker failure.
    const notification = {
      id: 'f1',
      title: 'Worker jetson failed',
      body: 'Worker jetson failed — no heartbeat for 5 s. 2 workers left, shards rebalanced.',
      severity: 'error' as const,
      target: { view: 'workers' as const, workerId: 2 },
    };
    coreOptions!.notifier.notify(notification);
    coreOptions!.tray!.setAttention(notification.body);
    expect(tray.image.path).toMatch(/tray-attention-32\.png$/);
    expect(tray.toolTip).toContain('no heartbeat for 5 s');

    Notification.instances.at(-1)!.fakeClick();
    expect(window.isVisible()).toBe(true);
    expect(window.isFocused()).toBe(true);
    expect(focus).toEqual([{ view: 'workers', workerId: 2 }]);
    expect(tray.image.path).toMatch(/tray-32\.png$/);
    expect(tray.toolTip).toBe('GPU Share');
  });

  it('does not mark the tray while the user is looking at the window', async () => {
    const { shell, tray } = await started();
    shell.showWindow();
    coreOptions!.tray!.setAttention('Run r1 paused: only 1 of 2 workers active.');
    expect(tray.toolTip).toBe('GPU Share');
  });

  it('tray Show GPU Share brings the window back after it was closed to the tray', async () => {
    const { window, tray } = await started();
    window.simulateReadyToShow();
    window.close();
    expect(window.isDestroyed()).toBe(false);
    expect(window.isVisible()).toBe(false);
    expect(Notification.instances.map((n) => n.title)).toEqual(['GPU Share is still running']);
    window.show();
    window.close();
    expect(Notification.instances).toHaveLength(1);
    tray.contextMenu!.fakeClick('Show GPU Share');
    expect(window.isVisible()).toBe(true);
  });

  it('a second launch shows the existing window', async () => {
    const { window } = await started();
    window.minimize();
    app.emit('second-instance', {}, ['/opt/electron', '.'], '/tmp', {});
    expect(window.isVisible()).toBe(true);
    expect(window.isMinimized()).toBe(false);
    expect(window.isFocused()).toBe(true);
  });
});

describe('quit', () => {
  it('stops the core before the app exits, then closes windows, tray and handlers', async () => {
    let release!: () => void;
    core.stop = vi.fn(() => new Promise<void>((resolve) => (release = resolve)));
    const { window, tray } = await started();
    tray.contextMenu!.fakeClick('Quit');
    expect(core.stop).toHaveBeenCalledTimes(1);
    expect(app.quitRequested).toBe(0);
    expect(window.isDestroyed()).toBe(false);
    app.quit();
    expect(core.stop).toHaveBeenCalledTimes(1);

    release();
    await vi.waitFor(() => expect(app.quitRequested).toBe(1));
    expect(window.isDestroyed()).toBe(true);
    expect(tray.isDestroyed()).toBe(true);
    expect(ipcMain.handlers.size).toBe(0);
  });

  it('quits even when stopping the core fails', async () => {
    core.stop = vi.fn(async () => {
      throw new Error('worker 3 did not stop');
    });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await started();
    app.quit();
    await vi.waitFor(() => expect(app.quitRequested).toBe(1));
    expect(errors.mock.calls.flat().join(' ')).toContain('worker 3 did not stop');
    errors.mockRestore();
  });
});

describe('shell arguments', () => {
  it('reads --cluster PATH and --cluster=PATH, ignoring everything else', () => {
    expect(parseShellArgs(['/opt/electron', '.', '--cluster', 'c.yaml'], '/w')).toEqual({ clusterPath: '/w/c.yaml' });
    expect(parseShellArgs(['/app/gpu-share', '--cluster=/abs/c.yaml', '--enable-logging'], '/w')).toEqual({ clusterPath: '/abs/c.yaml' });
    expect(parseShellArgs(['/app/gpu-share', '--no-sandbox'], '/w')).toEqual({});
    expect(parseShellArgs(['/app/gpu-share', '--cluster'], '/w')).toEqual({});
    expect(parseShellArgs(['/app/gpu-share', '--cluster', '--inspect'], '/w')).toEqual({});
    expect(parseShellArgs(['/app/gpu-share', '--coordinator-host', '0.0.0.0', '--coordinator-port=7500'], '/w')).toEqual({
      coordinatorHost: '0.0.0.0',
      coordinatorPort: 7500,
    });
    expect(parseShellArgs(['/app/gpu-share', '--coordinator-host', 'a b', '--coordinator-port', '99999'], '/w')).toEqual({});
    expect(parseShellArgs(['/app/gpu-share', '--coordinator-host', '10.0.0.5', '--trust-advertised-hosts'], '/w')).toEqual({
      coordinatorHost: '10.0.0.5',
      trustAdvertisedHosts: true,
    });
  });
});

describe('events reach the window through the shell', () => {
  it('core events arrive once the page listens', async () => {
    const { window } = await started();
    core.emit('onNotification', { id: 'x', title: 't', body: 'b', severity: 'info' });
    ipcRenderer.fakeAttach(window.webContents);
    const got: unknown[] = [];
    createPreloadApi(ipcRenderer as never).onNotification((n) => got.push(n));
    expect(got).toEqual([{ id: 'x', title: 't', body: 'b', severity: 'info' }]);
    expect(window.webContents.sent.map((s) => s.channel)).toEqual([events.onNotification]);
  });
});
