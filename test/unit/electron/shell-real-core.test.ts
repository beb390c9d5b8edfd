import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ClusterState } from '../../../src-shared/ipc';
import { createAppCore } from '../../../src-main/app/app-core';
import { nodePtySpawner } from '../../../src-main/platform/pty/node-pty-spawner';
import { createPreloadApi } from '../../../src-main/electron/preload-api';
import { startShell, type Shell } from '../../../src-main/electron/shell';
import { app, BrowserWindow, ipcRenderer, Notification, resetElectronMock, Tray } from '../../mocks/electron';

// The shell around the real core (real detection, real cluster store, real coordinator HTTP on loopback);
// only Electron itself is the fake.
let dir: string;
let shell: Shell | null = null;
beforeEach(() => {
  resetElectronMock();
  dir = mkdtempSync(path.join(os.tmpdir(), 'gpu-share-shell-core-'));
  app.setPath('userData', dir);
  app.fakeReady();
});
afterEach(async () => {
  if (shell && app.quitRequested === 0) {
    app.quit();
    await vi.waitFor(() => expect(app.quitRequested).toBe(1), { timeout: 15_000 });
  }
  shell = null;
  rmSync(dir, { recursive: true, force: true });
});

describe('shell with the real core', () => {
  it('serves the page, adds this machine from the tray, and stops the core on quit', { timeout: 90_000 }, async () => {
    shell = await startShell({
      createCore: (options) => createAppCore({ ...options, coordinatorPort: 0, localWorker: false, hardwarePollMs: 0 }),
      pty: nodePtySpawner,
      argv: ['/opt/electron', '.'],
      cwd: dir,
      platform: 'linux',
      env: {},
    });
    expect(shell).not.toBeNull();
    const window = shell!.window() as unknown as BrowserWindow;
    ipcRenderer.fakeAttach(window.webContents);
    const page = createPreloadApi(ipcRenderer as never);

    const hardware = await page.getHardware();
    expect(hardware.hostname).toBe(os.hostname());
    expect((await page.getCluster()).config.nodes).toEqual([]);
    const info = await page.getCoordinatorInfo();
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await expect(page.removeNode({ name: '' })).rejects.toThrow(/^removeNode: invalid argument at name/);

    const clusters: ClusterState[] = [];
    page.onCluster((state) => clusters.push(state));
    Tray.instances.at(-1)!.contextMenu!.fakeClick('Add this machine');
    await vi.waitFor(() => expect(Notification.instances.map((n) => n.title)).toContain('Added this machine'), { timeout: 30_000 });
    const clusterFile = path.join(dir, 'cluster.yaml');
    expect(existsSync(clusterFile)).toBe(true);
    expect(clusters).toHaveLength(1);
    const node = clusters[0]!.config.nodes[0]!;
    expect(readFileSync(clusterFile, 'utf8')).toContain(`name: ${node.name}`);
    expect(Notification.instances.find((n) => n.title === 'Added this machine')!.body).toBe(`Node "${node.name}" is now in ${clusterFile}.`);

    // Quit stops the core: the coordinator's port closes.
    expect((await fetch(`${info.url}/`).catch(() => null)) !== null).toBe(true);
    app.quit();
    await vi.waitFor(() => expect(app.quitRequested).toBe(1), { timeout: 15_000 });
    await expect(fetch(`${info.url}/`)).rejects.toThrow();
  });
});
