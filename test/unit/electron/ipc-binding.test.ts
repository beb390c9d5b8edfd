import { beforeEach, describe, expect, it } from 'vitest';
import { describeArgError, events, requests, type GpuShareApi } from '../../../src-shared/ipc';
import { APP_PAGE_URL } from '../../../src-main/electron/app-protocol';
import { bindIpc, type IpcBinding } from '../../../src-main/electron/ipc-binding';
import { createPreloadApi } from '../../../src-main/electron/preload-api';
import { LISTENING_CHANNEL } from '../../../src-main/electron/shell-channels';
import {
  BrowserWindow,
  FakeWebContents,
  FakeWebFrameMain,
  ipcMain,
  ipcRenderer,
  resetElectronMock,
} from '../../mocks/electron';
import { createFakeCore, type FakeCore } from './fake-core';

const sampleWorkers = [
  {
    id: 1,
    node: 'jetson',
    incarnation: 1,
    state: 'failed' as const,
    stateCause: 'no heartbeat for 5.2 s',
    gpus: [],
    backend: 'cpu' as const,
    joinedAt: 1,
    lastHeartbeatAt: 2,
    step: null,
    loss: null,
    samplesPerSec: null,
    address: null,
    local: false,
  },
];
/** A worker-list diff as the core sends it, and one that removes the worker again. */
const joined = { upsert: sampleWorkers, removed: [] };
const gone = { upsert: [], removed: [1] };

function openWindow(binding: IpcBinding): BrowserWindow {
  const window = new BrowserWindow({});
  binding.attachWindow(window as never);
  void window.loadURL(APP_PAGE_URL);
  return window;
}

/** The page in `window`, as the preload gives it. */
function pageApi(window: BrowserWindow): GpuShareApi {
  ipcRenderer.fakeAttach(window.webContents);
  return createPreloadApi(ipcRenderer as never);
}

function sentEvents(contents: FakeWebContents, channel?: string): unknown[] {
  return contents.sent.filter((s) => !channel || s.channel === channel).map((s) => s.args[0]);
}

let core: FakeCore;
let logged: string[];
let binding: IpcBinding;
beforeEach(() => {
  resetElectronMock();
  core = createFakeCore();
  logged = [];
  binding = bindIpc(core, { log: (m) => logged.push(m) });
});

describe('request handlers', () => {
  it('registers one ipcMain handler for every contract channel, and removes them on dispose', () => {
    const channels = Object.values(requests).map((r) => r.channel);
    expect([...ipcMain.handlers.keys()].sort()).toEqual([...channels].sort());
    expect(ipcMain.listenerCount(LISTENING_CHANNEL)).toBe(1);
    expect(core.listenerCount).toBe(1);
    binding.dispose();
    expect(ipcMain.handlers.size).toBe(0);
    expect(ipcMain.listenerCount(LISTENING_CHANNEL)).toBe(0);
    expect(core.listenerCount).toBe(0);
    // And it can be bound again (Electron refuses a second handler per channel).
    expect(() => bindIpc(core)).not.toThrow();
  });

  it('passes a request from our page to the core with its parsed argument, and the result back', async () => {
    const api = pageApi(openWindow(binding));
    await expect(api.removeNode({ name: 'jetson' })).resolves.toEqual({ echo: 'removeNode', arg: { name: 'jetson' } });
    await expect(api.getHardware()).resolves.toEqual({ echo: 'getHardware', arg: undefined });
    expect(core.calls).toEqual([
      { method: 'removeNode', arg: { name: 'jetson' } },
      { method: 'getHardware', arg: undefined },
    ]);
  });

  it('refuses a bad argument with the dispatcher message, before the core sees it', async () => {
    const api = pageApi(openWindow(binding));
    const parsed = requests.removeNode.arg.safeParse({ name: '' });
    expect(parsed.success).toBe(false);
    const expected = describeArgError('removeNode', parsed.error!);
    await expect(api.removeNode({ name: '' })).rejects.toThrow(expected);
    await expect((api.drainWorker as (a: unknown) => Promise<unknown>)({ workerId: 'x' })).rejects.toThrow(/^drainWorker: invalid argument at workerId/);
    await expect((api.getCluster as (a: unknown) => Promise<unknown>)({ extra: 1 })).rejects.toThrow(/^getCluster: invalid argument/);
    expect(core.calls).toEqual([]);
  });

  it('sends a handler failure back as its plain message', async () => {
    core.override('addThisMachine', async () => {
      throw new Error('nvidia-smi failed on node desktop: exit 9');
    });
    const api = pageApi(openWindow(binding));
    await expect(api.addThisMachine()).rejects.toThrow(/^nvidia-smi failed on node desktop: exit 9$/);
  });

  it('refuses senders that are not our page: another window, an iframe, a page elsewhere, a gone frame', async () => {
    const ours = openWindow(binding);
    const stranger = new BrowserWindow({});
    void stranger.loadURL(APP_PAGE_URL);
    const channel = requests.getCluster.channel;
    const refused = { ok: false, error: "getCluster: refused, the request did not come from GPU Share's own page" };

    await expect(ipcMain.fakeInvoke({ sender: stranger.webContents }, channel)).resolves.toEqual(refused);
    const iframe = new FakeWebFrameMain(APP_PAGE_URL, ours.webContents.mainFrame);
    await expect(ipcMain.fakeInvoke({ sender: ours.webContents, senderFrame: iframe }, channel)).resolves.toEqual(refused);
    await expect(ipcMain.fakeInvoke({ sender: ours.webContents, senderFrame: null }, channel)).resolves.toEqual(refused);
    const elsewhere = new FakeWebFrameMain('https://example.com/');
    await expect(ipcMain.fakeInvoke({ sender: ours.webContents, senderFrame: elsewhere }, channel)).resolves.toEqual(refused);
    expect(core.calls).toEqual([]);
    expect(logged).toHaveLength(4);

    await expect(ipcMain.fakeInvoke({ sender: ours.webContents }, channel)).resolves.toMatchObject({ ok: true });
    ours.destroy();
    await expect(ipcMain.fakeInvoke({ sender: ours.webContents }, channel)).resolves.toEqual(refused);
    expect(core.calls).toHaveLength(1);
  });
});

describe('events', () => {
  it('wait for the page to listen on their channel, then arrive in order', () => {
    const window = openWindow(binding);
    core.emit('onWorkersChanged', joined);
    core.emit('onFocus', { view: 'workers', workerId: 1 });
    core.emit('onWorkersChanged', gone);
    expect(window.webContents.sent).toEqual([]);

    const api = pageApi(window);
    const workers: unknown[] = [];
    api.onWorkersChanged((w) => workers.push(w));
    expect(workers).toEqual([joined, gone]);
    expect(sentEvents(window.webContents, events.onFocus)).toEqual([]);

    core.emit('onWorkersChanged', joined);
    expect(workers).toEqual([joined, gone, joined]);
    const focus: unknown[] = [];
    api.onFocus((t) => focus.push(t));
    expect(focus).toEqual([{ view: 'workers', workerId: 1 }]);
  });

  it('wait again after a reload until the new page listens', () => {
    const window = openWindow(binding);
    const first = pageApi(window);
    first.onRun(() => undefined);
    core.emit('onRun', { id: 'r1' } as never);
    expect(sentEvents(window.webContents, events.onRun)).toEqual([{ id: 'r1' }]);

    window.webContents.simulateLoad(APP_PAGE_URL);
    core.emit('onRun', { id: 'r2' } as never);
    expect(sentEvents(window.webContents, events.onRun)).toEqual([{ id: 'r1' }]);
    const second = pageApi(window);
    const runs: unknown[] = [];
    second.onRun((r) => runs.push(r));
    expect(runs).toEqual([{ id: 'r2' }]);
  });

  it('ignore a "listening" signal from a stranger or for a channel outside the contract', () => {
    const window = openWindow(binding);
    const stranger = new BrowserWindow({});
    void stranger.loadURL(APP_PAGE_URL);
    ipcMain.fakeSend({ sender: stranger.webContents }, LISTENING_CHANNEL, events.onEvent);
    ipcMain.fakeSend({ sender: window.webContents, senderFrame: new FakeWebFrameMain('https://example.com/') }, LISTENING_CHANNEL, events.onEvent);
    ipcMain.fakeSend({ sender: window.webContents }, LISTENING_CHANNEL, 'hardware:get');
    core.emit('onEvent', { seq: 1 } as never);
    expect(window.webContents.sent).toEqual([]);
    expect(stranger.webContents.sent).toEqual([]);
  });

  it('skip destroyed windows and keep serving the live ones', () => {
    const doomed = openWindow(binding);
    const alive = openWindow(binding);
    pageApi(doomed).onCluster(() => undefined);
    pageApi(alive).onCluster(() => undefined);
    doomed.destroy();
    expect(() => core.emit('onCluster', { path: '/c.yaml' } as never)).not.toThrow();
    expect(sentEvents(alive.webContents, events.onCluster)).toEqual([{ path: '/c.yaml' }]);
    expect(doomed.webContents.sent).toEqual([]);
  });

  it('sendEvent goes through the same outbox (used for onFocus after a notification click)', () => {
    const window = openWindow(binding);
    binding.sendEvent('onFocus', { view: 'runs', runId: 'r1' });
    expect(window.webContents.sent).toEqual([]);
    const focus: unknown[] = [];
    pageApi(window).onFocus((t) => focus.push(t));
    expect(focus).toEqual([{ view: 'runs', runId: 'r1' }]);
  });
});
