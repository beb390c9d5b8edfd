// The presence WebSocket over a real server: a goodbye is a leave at once, a killed agent process (its
// kernel closes the socket in order) is failed within a second, and a reset — what a network fault looks
// like — raises no alarm; sockets without the worker's session never open.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { systemClock } from '../../../src-main/platform/ports';
import { apiPaths, PRESENCE_CLOSE, PRESENCE_POKE, SESSION_HEADER, type JoinResponse } from '../../../src-shared/worker-protocol';

const JOIN = 'join-' + 'e'.repeat(24);
const OPERATOR = 'op-' + 'f'.repeat(24);
let svc: CoordinatorService;
let api: CoordinatorHttp;

beforeEach(async () => {
  svc = new CoordinatorService({ clock: systemClock, joinToken: JOIN, operatorToken: OPERATOR, heartbeatTimeoutMs: 5000 });
  api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR });
});
afterEach(async () => {
  await api.close();
});

function joinWorker(node: string): JoinResponse & { sessionSecret: string } {
  const j = svc.join(
    { node, agentVersion: 't', machineId: `machine-${node}`.padEnd(24, 'q'), gpus: [], cpuCores: 2, ramMb: 1024, advertiseHost: '127.0.0.1', rdzvPort: 29500, python: null },
    '127.0.0.1',
  );
  svc.heartbeat(j.workerId, { incarnation: j.incarnation });
  return j;
}

function presenceUrl(workerId: number): string {
  return api.url.replace(/^http/, 'ws') + apiPaths.presence(workerId);
}

function open(workerId: number, session: string | null): Promise<WebSocket> {
  const headers: Record<string, string> = { authorization: `Bearer ${JOIN}` };
  if (session) headers[SESSION_HEADER] = session;
  const ws = new WebSocket(presenceUrl(workerId), { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

async function until(check: () => boolean, ms: number): Promise<number> {
  const t0 = performance.now();
  while (!check()) {
    if (performance.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return performance.now() - t0;
}

const state = (id: number) => svc.workers().find((w) => w.id === id)?.state;

describe('presence', () => {
  it('is refused without the worker\'s session', async () => {
    const w = joinWorker('a');
    await expect(open(w.workerId, null)).rejects.toThrow('HTTP 401');
    await expect(open(w.workerId, 'z'.repeat(43))).rejects.toThrow('HTTP 401');
    await expect(open(99, w.sessionSecret)).rejects.toThrow('HTTP 404');
    expect(api.presenceCount()).toBe(0);
  });

  it('a goodbye (close code BYE) is a leave at once', async () => {
    const w = joinWorker('a');
    const ws = await open(w.workerId, w.sessionSecret);
    await until(() => api.presenceCount() === 1, 1000);
    ws.close(PRESENCE_CLOSE.BYE, 'stopped by the user');
    await until(() => state(w.workerId) === 'left', 1000);
    expect(svc.events().some((e) => e.kind === 'worker-left' && e.message.includes('stopped by the user'))).toBe(true);
  });

  it('a killed agent process is failed well before the heartbeat timeout (its kernel closes the socket)', async () => {
    const w = joinWorker('a');
    const wsPath = createRequire(import.meta.url).resolve('ws');
    const script = `const W=require(${JSON.stringify(wsPath)});const s=new W(process.argv[1],{headers:JSON.parse(process.argv[2])});s.on('open',()=>console.log('open'));setInterval(()=>{},1e6)`;
    const child = spawn(process.execPath, ['-e', script, presenceUrl(w.workerId), JSON.stringify({ authorization: `Bearer ${JOIN}`, [SESSION_HEADER]: w.sessionSecret })], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => d.toString().includes('open') && resolve()));
    await until(() => api.presenceCount() === 1, 1000);
    child.kill('SIGKILL');
    // The 5 s timeout never comes into it: the orderly close does (≈0.3 s; bench/multihost-failure has the figure).
    const took = await until(() => state(w.workerId) === 'failed', 4000);
    expect(took).toBeLessThan(4000);
    expect(svc.workers()[0]!.stateCause).toContain('agent process ended');
  });

  it('a reset (a network fault) does not fail the worker; the heartbeat timeout stays in charge', async () => {
    const w = joinWorker('a');
    const ws = await open(w.workerId, w.sessionSecret);
    await until(() => api.presenceCount() === 1, 1000);
    (ws as unknown as { _socket: import('node:net').Socket })._socket.resetAndDestroy();
    await until(() => api.presenceCount() === 0, 1000);
    await new Promise((r) => setTimeout(r, 700));
    expect(state(w.workerId)).toBe('active');
  });

  it('pings on the presence socket keep a worker whose heartbeats stall alive, for at most 3 timeouts', async () => {
    await api.close();
    svc = new CoordinatorService({ clock: systemClock, joinToken: JOIN, operatorToken: OPERATOR, heartbeatTimeoutMs: 400 });
    api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR });
    const pinged = joinWorker('pinged');
    const silent = joinWorker('silent');
    const ws = await open(pinged.workerId, pinged.sessionSecret);
    await open(silent.workerId, silent.sessionSecret);
    const t0 = performance.now();
    const ticks = setInterval(() => {
      ws.ping();
      svc.tick();
    }, 50);
    try {
      // The one without pings fails at the timeout; the pinged one is still active well past it.
      await until(() => state(silent.workerId) === 'failed', 1500);
      await new Promise((r) => setTimeout(r, Math.max(0, 900 - (performance.now() - t0))));
      expect(state(pinged.workerId)).toBe('active');
      // Heartbeats carry its instructions: pings alone keep it for 3 timeouts (1.2 s), not for ever.
      await until(() => state(pinged.workerId) === 'failed', 1500);
      expect(performance.now() - t0).toBeGreaterThan(1100);
      const cause = svc.workers().find((w) => w.id === pinged.workerId)?.stateCause ?? '';
      expect(cause).toMatch(/no heartbeat for 1\.\d s \(only its presence link answered\)/);
    } finally {
      clearInterval(ticks);
    }
  });

  it('an orderly close followed by a quick reconnect is not a death; without the reconnect it is', async () => {
    const a = joinWorker('a');
    const first = await open(a.workerId, a.sessionSecret);
    await until(() => api.presenceCount() === 1, 1000);
    (first as unknown as { _socket: import('node:net').Socket })._socket.end();
    await open(a.workerId, a.sessionSecret);
    await new Promise((r) => setTimeout(r, 600));
    expect(state(a.workerId)).toBe('active');

    const b = joinWorker('b');
    const lone = await open(b.workerId, b.sessionSecret);
    await until(() => api.presenceCount() === 2, 1000);
    (lone as unknown as { _socket: import('node:net').Socket })._socket.end();
    await until(() => state(b.workerId) === 'failed', 1500);
  });

  it('a newer socket of the same session replaces the older one, which is told so', async () => {
    const w = joinWorker('a');
    const older = await open(w.workerId, w.sessionSecret);
    const closed = new Promise<number>((resolve) => older.once('close', (code) => resolve(code)));
    await open(w.workerId, w.sessionSecret);
    expect(await closed).toBe(PRESENCE_CLOSE.REPLACED);
    await new Promise((r) => setTimeout(r, 500));
    expect(state(w.workerId)).toBe('active');
  });

  it('queued instructions poke the agent at once, once per turn, so a relaunch needs no heartbeat interval to arrive', async () => {
    const w = joinWorker('a');
    const ws = await open(w.workerId, w.sessionSecret);
    const messages: string[] = [];
    ws.on('message', (d) => messages.push(String(d)));
    await until(() => api.presenceCount() === 1, 1000);
    svc.startRun({ name: 'r', command: ['t.py'], samples: 10, minWorkers: 1, maxWorkers: 1, heartbeatTimeoutMs: 5000, maxRestarts: 0, nprocPerNode: 1, useGpus: false, launcher: 'direct', env: {} });
    expect(svc.runs()[0]!.state).toBe('running');
    await until(() => messages.length > 0, 1000);
    await new Promise((r) => setTimeout(r, 100));
    expect(messages).toEqual([PRESENCE_POKE]);
  });
});
