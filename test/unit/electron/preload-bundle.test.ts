import { build } from 'esbuild';
import path from 'node:path';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { events, requests } from '../../../src-shared/ipc';

const root = path.resolve(__dirname, '../../..');

describe('preload bundle', () => {
  it('runs where a sandboxed preload runs: only `electron` can be required, no Node globals', { timeout: 60_000 }, async () => {
    // The same options scripts/build.mjs uses for the preload: everything inlined except electron.
    const result = await build({
      entryPoints: [path.join(root, 'src-main/electron/preload.ts')],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      external: ['electron'],
      write: false,
      logLevel: 'silent',
    });
    const code = result.outputFiles[0]!.text;
    const required: string[] = [];
    const exposed = new Map<string, Record<string, unknown>>();
    const fakeElectron = {
      contextBridge: { exposeInMainWorld: (key: string, api: Record<string, unknown>) => exposed.set(key, api) },
      ipcRenderer: { invoke: async () => undefined, on: () => undefined, removeListener: () => undefined, send: () => undefined },
    };
    const module = { exports: {} };
    vm.runInNewContext(code, {
      module,
      exports: module.exports,
      require: (name: string) => {
        required.push(name);
        if (name === 'electron') return fakeElectron;
        throw new Error(`a sandboxed preload cannot require "${name}"`);
      },
    });
    expect(required).toEqual(['electron']);
    expect(Object.keys(exposed.get('gpuShare') ?? {}).sort()).toEqual([...Object.keys(requests), ...Object.keys(events)].sort());
  });
});
