import { beforeEach, describe, expect, it } from 'vitest';
import { events, requests } from '../../../src-shared/ipc';
import { createPreloadApi } from '../../../src-main/electron/preload-api';
import { LISTENING_CHANNEL } from '../../../src-main/electron/shell-channels';
import { contextBridge, FakeWebContents, ipcMain, ipcRenderer, resetElectronMock } from '../../mocks/electron';

describe('preload (as bundled: exposes window.gpuShare on import)', () => {
  it('exposes exactly the contract method names, all functions, and no ipcRenderer', async () => {
    resetElectronMock();
    await import('../../../src-main/electron/preload');
    expect([...contextBridge.exposed.keys()]).toEqual(['gpuShare']);
    const api = contextBridge.exposed.get('gpuShare') as Record<string, unknown>;
    const expected = [...Object.keys(requests), ...Object.keys(events)].sort();
    expect(Object.keys(api).sort()).toEqual(expected);
    for (const [name, value] of Object.entries(api)) expect(typeof value, name).toBe('function');
    expect(Object.values(api)).not.toContain(ipcRenderer);
    for (const leaked of ['ipcRenderer', 'invoke', 'send', 'on', 'removeListener', 'sendSync']) expect(api).not.toHaveProperty(leaked);
    expect(Object.isFrozen(api)).toBe(true);
  });
});

describe('preload API', () => {
  let contents: FakeWebContents;
  beforeEach(() => {
    resetElectronMock();
    contents = new FakeWebContents();
    ipcRenderer.fakeAttach(contents);
  });

  it('invokes each request on its own channel with the argument, and resolves to the result', async () => {
    const api = createPreloadApi(ipcRenderer as never) as unknown as Record<string, (arg?: unknown) => Promise<unknown>>;
    for (const [method, { channel }] of Object.entries(requests)) {
      ipcMain.handle(channel, (_event, arg) => ({ ok: true, result: { channel, arg } }));
      const arg = { probe: method };
      await expect(api[method]!(arg)).resolves.toEqual({ channel, arg });
    }
  });

  it('turns a refused request into an Error with exactly the main process message', async () => {
    const api = createPreloadApi(ipcRenderer as never);
    ipcMain.handle(requests.removeNode.channel, () => ({ ok: false, error: 'removeNode: invalid argument at name: too small' }));
    await expect(api.removeNode({ name: '' })).rejects.toThrow(/^removeNode: invalid argument at name: too small$/);
    ipcMain.handle(requests.getCluster.channel, () => 'not an envelope');
    await expect(api.getCluster()).rejects.toThrow('getCluster: malformed reply from the main process');
  });

  it('hands listeners the payload only, announces each channel once, and unsubscribes', () => {
    const api = createPreloadApi(ipcRenderer as never);
    const seen: unknown[] = [];
    const seenToo: unknown[] = [];
    const off = api.onFocus((target) => seen.push(target));
    const offToo = api.onFocus((target) => seenToo.push(target));
    expect(ipcRenderer.sentToMain).toEqual([{ channel: LISTENING_CHANNEL, args: [events.onFocus] }]);
    contents.send(events.onFocus, { view: 'workers', workerId: 3 });
    expect(seen).toEqual([{ view: 'workers', workerId: 3 }]);
    off();
    off();
    contents.send(events.onFocus, { view: 'runs' });
    expect(seen).toHaveLength(1);
    expect(seenToo).toEqual([{ view: 'workers', workerId: 3 }, { view: 'runs' }]);
    offToo();
    expect(ipcRenderer.listenerCount(events.onFocus)).toBe(0);
    expect(() => (api.onRun as (l: unknown) => void)('not a function')).toThrow('onRun: the listener must be a function');
  });
});
