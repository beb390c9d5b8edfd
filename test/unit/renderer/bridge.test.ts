// The bridge: first load, every contract event turned into a store change, reload after a reconnect —
// through the real WebSocket client and a real `ws` server on 127.0.0.1.
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import type { AddressInfo } from 'node:net';
import { events, type EventMethod, type EventPayloads } from '../../../src-shared/ipc';
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import type { RunSnapshot, UserNotification } from '../../../src-shared/training';
import { createWsClient, type SocketLike } from '../../../src-renderer/api/ws-client';
import { connectBridge, eventHandlers } from '../../../src-renderer/bridge';
import { createAppStore } from '../../../src-renderer/store/app-store';
import { runSnapshot, workerSnapshot } from '../helpers/snapshots';

const hw: HardwareSnapshot = {
  hostname: 'box',
  os: 'Debian 12',
  arch: 'x64',
  physicalCores: 2,
  logicalCores: 2,
  ramTotalMb: 8000,
  ramAvailableMb: 4000,
  gpus: [],
  nvidia: { available: false, path: null, reason: 'nvidia-smi not found on PATH', driverVersion: null },
  detectedAt: '2025-01-01T00:00:00Z',
  tookMs: 5,
};

const run1: RunSnapshot = runSnapshot({ stateCause: 'started by user', spec: { ...runSnapshot().spec, command: ['t.py'], samples: 100, maxWorkers: 2 }, rdzvEndpoint: '127.0.0.1:29500' });

const snapshots: Record<string, unknown> = {
  getHardware: hw,
  getCluster: { config: { nodes: [] }, path: '/tmp/cluster.yaml', warnings: [], thisMachineNode: null, summary: '' },
  getWorkers: [],
  getRuns: [run1],
  getEvents: [{ seq: 1, at: 1, kind: 'run-started', severity: 'info', message: 'Run example started' }],
  getCoordinatorInfo: { url: 'http://127.0.0.1:7421', joinToken: 'tok', joinCommand: 'gpu-share worker --join http://127.0.0.1:7421 --token tok', reachableFromOtherMachines: false, reachability: 'only this machine' },
  getExampleRun: { command: ['t.py'], samples: 100 },
  getRunOutput: { runId: 'run-1', text: 'step 0\n' },
};

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const worker = workerSnapshot;

/** A fake server; answers to the methods in `held` wait until release() (a slow answer among the first load's). */
async function setup(opts: { answers?: Record<string, unknown>; held?: string[] } = {}) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const calls: string[] = [];
  let socket: WebSocket | null = null;
  const waiting: (() => void)[] = [];
  wss.on('connection', (ws) => {
    socket = ws;
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { id: number; method: string };
      calls.push(msg.method);
      const answer = () => ws.send(JSON.stringify({ id: msg.id, ok: true, result: { ...snapshots, ...opts.answers }[msg.method] ?? null }));
      if (opts.held?.includes(msg.method)) waiting.push(answer);
      else answer();
    });
  });
  const release = () => {
    for (const answer of waiting.splice(0)) answer();
  };
  const { api, connection } = createWsClient({
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws?token=t`,
    createSocket: (u) => new WebSocket(u) as unknown as SocketLike,
    initialBackoffMs: 20,
  });
  const store = createAppStore();
  const notified: UserNotification[] = [];
  const disconnect = connectBridge(api, store, connection, { now: () => 42, onNotification: (n) => notified.push(n) });
  cleanups.push(
    () => new Promise<void>((r) => wss.close(() => r())),
    () => {
      for (const c of wss.clients) c.terminate();
    },
    () => connection.close(),
    disconnect,
  );
  const push = <E extends EventMethod>(event: E, payload: EventPayloads[E]) => socket!.send(JSON.stringify({ event, payload }));
  return { store, calls, push, notified, connection, socket: () => socket!, release };
}

async function until(fn: () => boolean, what: string): Promise<void> {
  const started = Date.now();
  while (!fn()) {
    if (Date.now() - started > 5000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('bridge', () => {
  it('has a handler for every event of the contract', () => {
    expect(Object.keys(eventHandlers(createAppStore())).sort()).toEqual(Object.keys(events).sort());
  });

  it('loads every snapshot, then the selected run output, and marks the page ready', async () => {
    const { store, calls } = await setup();
    await until(() => store.getState().loaded && store.getState().runs.output['run-1'] !== undefined, 'load');
    const s = store.getState();
    expect(s.hardware?.hostname).toBe('box');
    expect(s.runs.selectedId).toBe('run-1');
    expect(s.runs.output['run-1']?.text).toBe('step 0\n');
    expect(s.events.map((e) => e.message)).toEqual(['Run example started']);
    expect(s.coordinator?.joinCommand).toContain('--token tok');
    expect(s.connection.status).toBe('open');
    expect(calls.slice(0, 7).sort()).toEqual(['getCluster', 'getCoordinatorInfo', 'getEvents', 'getExampleRun', 'getHardware', 'getRuns', 'getWorkers']);
  });

  it('turns each pushed event into its store change', async () => {
    const { store, push, notified } = await setup();
    // Wait for the fetched output too: this server's getRunOutput does not include chunks pushed later.
    await until(() => store.getState().loaded && store.getState().runs.output['run-1']?.epoch === 1, 'load');
    push('onHardware', { ...hw, ramAvailableMb: 1234 });
    push('onCluster', { config: { nodes: [{ name: 'n', host: 'localhost', transport: 'local', gpus: [], max_adapters: 2 }] }, path: '/x', warnings: [], thisMachineNode: 'n', summary: '' });
    push('onWorkersChanged', { upsert: [worker(0, { node: 'box', step: 3, loss: 0.5, samplesPerSec: 10 })], removed: [] });
    push('onRun', { ...run1, state: 'paused', stateCause: 'Run example paused: 0 of 1 workers active' });
    push('onRunOutput', { runId: 'run-1', workerId: 0, node: 'box', data: 'step 1\n' });
    push('onEvent', { seq: 2, at: 2, kind: 'worker-failed', severity: 'error', message: 'Worker jetson failed — no heartbeat for 5.1 s' });
    const note: UserNotification = { id: 'n-1', title: 'Worker jetson failed', body: 'No heartbeat for 5 s.', severity: 'error', target: { view: 'workers', workerId: 1 } };
    push('onNotification', note);
    push('onFocus', { view: 'runs', runId: 'run-1' });
    await until(() => store.getState().view === 'runs', 'focus event');
    const s = store.getState();
    expect(s.hardware?.ramAvailableMb).toBe(1234);
    expect(s.cluster?.thisMachineNode).toBe('n');
    expect(s.workers.map((w) => w.state)).toEqual(['active']);
    expect(s.runs.list[0]?.state).toBe('paused');
    expect(s.runs.output['run-1']?.text).toBe('step 0\n[box] step 1\n');
    expect(s.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(s.toasts).toEqual([{ id: 'n-1', notification: note, at: 42 }]);
    expect(notified).toEqual([note]);
    expect(s.runs.selectedId).toBe('run-1');
  });

  it('applies worker diffs on the full list in id order: changed in place, added, removed', async () => {
    const { store, push } = await setup({ answers: { getWorkers: [worker(2), worker(0), worker(5)] } });
    await until(() => store.getState().loaded, 'load');
    expect(store.getState().workers.map((w) => w.id)).toEqual([0, 2, 5]);
    const untouched = store.getState().workers[0];
    push('onWorkersChanged', { upsert: [worker(3), worker(5, { state: 'failed' })], removed: [2] });
    await until(() => store.getState().workers.length === 3 && store.getState().workers[2]?.state === 'failed', 'diff applied');
    expect(store.getState().workers.map((w) => [w.id, w.state])).toEqual([[0, 'active'], [3, 'active'], [5, 'failed']]);
    expect(store.getState().workers[0]).toBe(untouched);
  });

  it('keeps a worker diff that arrives after the worker list while other first answers are still on their way', async () => {
    const { store, push, calls, release } = await setup({ answers: { getWorkers: [worker(0), worker(1)] }, held: ['getExampleRun'] });
    await until(() => calls.includes('getExampleRun') && store.getState().workers.length === 2, 'the worker list');
    // Newer than the list: worker 1 failed. It must survive the rest of the first load.
    push('onWorkersChanged', { upsert: [worker(1, { state: 'failed' })], removed: [] });
    await until(() => store.getState().workers[1]?.state === 'failed', 'diff applied');
    release();
    await until(() => store.getState().loaded, 'load');
    expect(store.getState().workers.map((w) => w.state)).toEqual(['active', 'failed']);
  });

  it('reloads everything after the connection comes back, since events may have been missed', async () => {
    const { store, calls, connection, socket } = await setup();
    await until(() => store.getState().loaded && calls.includes('getRunOutput'), 'load');
    const before = calls.filter((c) => c === 'getCluster').length;
    socket().terminate();
    await until(() => store.getState().connection.status === 'reconnecting', 'reconnecting shown');
    await until(() => connection.current().opens === 2 && calls.filter((c) => c === 'getCluster').length === before + 1, 'reload');
    expect(store.getState().connection.status).toBe('open');
  });
});
