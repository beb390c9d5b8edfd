// A machine holding only the join token must not be able to disturb another worker: each forged request of
// the two-machines issue is refused over the real HTTP API, and the victim is left as it was.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { apiPaths, joinResponseSchema, SESSION_HEADER, type JoinRequest } from '../../../src-shared/worker-protocol';
import { FakeClock } from '../coordinator/fake-clock';
import { joinProofHeaders } from './join-proof-client';

const JOIN = 'join-' + 'c'.repeat(24);
const OPERATOR = 'op-' + 'd'.repeat(24);
let clock: FakeClock;
let svc: CoordinatorService;
let api: CoordinatorHttp;

beforeEach(async () => {
  clock = new FakeClock();
  svc = new CoordinatorService({ clock, joinToken: JOIN, operatorToken: OPERATOR, outputBudget: { bytesPerSec: 1000, burstBytes: 4000 } });
  api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR });
});
afterEach(async () => {
  await api.close();
});

function body(node: string, machine = node, extra: Partial<JoinRequest> = {}): JoinRequest {
  return {
    node,
    agentVersion: 'test',
    machineId: `machine-${machine}`.padEnd(24, 'm'),
    gpus: [],
    cpuCores: 4,
    ramMb: 8192,
    advertiseHost: '127.0.0.1',
    rdzvPort: 29500,
    python: { path: '/usr/bin/python3', torchVersion: '1.13.1' },
    ...extra,
  };
}

async function post(path: string, json: unknown, opts: { token?: string; session?: string } = {}) {
  // A join proves the join token by its challenge; the token itself is never sent, so neither is it on later calls.
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (path === apiPaths.join) Object.assign(headers, await joinProofHeaders(api.url, opts.token ?? JOIN));
  else if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.session) headers[SESSION_HEADER] = opts.session;
  const res = await fetch(api.url + path, { method: 'POST', headers, body: JSON.stringify(json) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

async function join(node: string, machine = node, extra: Partial<JoinRequest> = {}) {
  const r = await post(apiPaths.join, body(node, machine, extra));
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return joinResponseSchema.parse(r.json);
}

function victimState() {
  return svc.workers().find((w) => w.node === 'victim');
}

describe('forged worker requests', () => {
  it('(a) a forged leave for another worker is refused, with or without the attacker\'s own session', async () => {
    const victim = await join('victim');
    await post(apiPaths.heartbeat(victim.workerId), { incarnation: 1 }, { session: victim.sessionSecret });
    const attacker = await join('attacker');
    const bare = await post(apiPaths.leave(victim.workerId), { incarnation: 1, reason: 'bye' });
    expect(bare.status).toBe(401);
    expect(bare.json.error).toContain('missing session');
    const borrowed = await post(apiPaths.leave(victim.workerId), { incarnation: 1 }, { session: attacker.sessionSecret });
    expect(borrowed.status).toBe(401);
    expect(borrowed.json.error).toContain('wrong session');
    expect(victimState()).toMatchObject({ state: 'active', incarnation: 1 });
  });

  it('(b) forged crash reports cannot fail a run', async () => {
    const victim = await join('victim');
    await post(apiPaths.heartbeat(victim.workerId), { incarnation: 1 }, { session: victim.sessionSecret });
    const run = svc.startRun({ name: 'r', command: ['t.py'], samples: 10, minWorkers: 1, maxWorkers: 1, heartbeatTimeoutMs: 5000, maxRestarts: 0, nprocPerNode: 1, useGpus: false, launcher: 'torchrun', env: {} });
    const crash = { incarnation: 1, reports: [{ type: 'exited', runId: run.id, generation: 1, exitCode: 1, signal: null, requested: false }] };
    expect((await post(apiPaths.report(victim.workerId), crash)).status).toBe(401);
    expect((await post(apiPaths.report(victim.workerId), crash, { session: 'x'.repeat(43) })).status).toBe(401);
    expect(svc.runs()[0]!.state).toBe('running');
  });

  it('(c) forged heartbeats cannot keep a dead worker active', async () => {
    const victim = await join('victim');
    await post(apiPaths.heartbeat(victim.workerId), { incarnation: 1 }, { session: victim.sessionSecret });
    for (let t = 0; t < 7; t++) {
      clock.advance(1000);
      expect((await post(apiPaths.heartbeat(victim.workerId), { incarnation: 1 })).status).toBe(401);
      svc.tick();
    }
    expect(victimState()).toMatchObject({ state: 'failed' });
  });

  it('(d) another machine cannot take a live worker\'s name, even from the same address', async () => {
    await join('victim');
    const r = await post(apiPaths.join, body('victim', 'impostor'));
    expect(r.status).toBe(409);
    expect(r.json.error).toContain('belongs to another machine');
    expect(victimState()).toMatchObject({ state: 'syncing', incarnation: 1 });
    // The real machine coming back (its agent restarted) is still welcome.
    expect((await join('victim')).incarnation).toBe(2);
  });

  it('(e) local: true is refused from another machine', () => {
    const p = (() => {
      try {
        svc.join(body('laptop', 'laptop', { local: true, advertiseHost: '10.213.0.7' }), { seenFrom: '10.213.0.7', coordinatorAddr: '10.213.0.1', sameMachine: false });
      } catch (e) {
        return e as { status: number; message: string };
      }
      throw new Error('accepted');
    })();
    expect(p.status).toBe(403);
    expect(p.message).toContain('only accepted from the coordinator\'s own machine');
  });

  it('(f) an advertiseHost other than where the worker connects from is refused (the c10d store host)', async () => {
    const r = await post(apiPaths.join, body('evil', 'evil', { advertiseHost: '10.66.6.6' }));
    expect(r.status).toBe(403);
    expect(r.json.error).toContain('advertises 10.66.6.6 but connects from 127.0.0.1');
    expect(svc.workers()).toHaveLength(0);
  });

  it('a session ends with its incarnation: the old secret is refused after a rejoin', async () => {
    const first = await join('victim');
    const second = await join('victim');
    expect((await post(apiPaths.heartbeat(0), { incarnation: 1 }, { session: first.sessionSecret })).status).toBe(401);
    expect((await post(apiPaths.heartbeat(0), { incarnation: 2 }, { session: second.sessionSecret })).status).toBe(200);
  });
});

describe('bounded under abuse', () => {
  it('failed and left workers are pruned: 600 join-and-leave cycles keep at most 100 gone rows', async () => {
    for (let i = 0; i < 600; i++) {
      const j = svc.join(body(`w${i}`), '127.0.0.1');
      svc.leave(j.workerId, { incarnation: j.incarnation, reason: 'left' });
    }
    const kept = svc.workers();
    expect(kept.length).toBeLessThanOrEqual(101);
    expect(kept.every((w) => w.state === 'left')).toBe(true);
  });

  it('a run id longer than the cap is refused, not stored', async () => {
    const w = await join('victim');
    const r = await post(apiPaths.heartbeat(w.workerId), { incarnation: 1, progress: { runId: 'x'.repeat(900_000), generation: 0, step: 1, loss: null, samplesPerSec: null, resumedFrom: null } }, { session: w.sessionSecret });
    expect(r.status).toBe(400);
    expect(r.json.error).toContain('progress.runId');
  });

  it('output beyond a worker\'s allowance is dropped and said so, once per second', async () => {
    const w = await join('victim');
    await post(apiPaths.heartbeat(w.workerId), { incarnation: 1 }, { session: w.sessionSecret });
    const run = svc.startRun({ name: 'r', command: ['t.py'], samples: 10, minWorkers: 1, maxWorkers: 1, heartbeatTimeoutMs: 5000, maxRestarts: 0, nprocPerNode: 1, useGpus: false, launcher: 'torchrun', env: {} });
    const line = 'y'.repeat(99) + '\n';
    for (let i = 0; i < 20; i++) {
      const reports = [{ type: 'output', runId: run.id, generation: 1, data: line.repeat(100) }];
      expect((await post(apiPaths.report(w.workerId), { incarnation: 1, reports }, { session: w.sessionSecret })).status).toBe(200);
    }
    const text = svc.runOutput(run.id);
    expect(text.length).toBeLessThan(8_000); // 200 KB sent, a 4 KB burst allowed
    expect(text).toMatch(/\[gpu-share\] dropped \d+ characters of output from victim/);
  });

  it('another machine\'s output cannot erase the terminal or forge a line', () => {
    const facts = { seenFrom: '10.213.0.2', coordinatorAddr: '10.213.0.1', sameMachine: false };
    const j = svc.join(body('beta', 'beta', { advertiseHost: '10.213.0.2' }), facts);
    svc.heartbeat(j.workerId, { incarnation: j.incarnation });
    const run = svc.startRun({ name: 'r', command: ['t.py'], samples: 10, minWorkers: 1, maxWorkers: 1, heartbeatTimeoutMs: 5000, maxRestarts: 0, nprocPerNode: 1, useGpus: false, launcher: 'torchrun', env: {} });
    const attack = 'step 3\r\n\x1b[2J\x1b[3J\x1b[H\x1bc\x1b]0;owned\x07training FINISHED OK\r\n';
    svc.report(j.workerId, { incarnation: j.incarnation, reports: [{ type: 'output', runId: run.id, generation: 1, data: attack }] });
    const text = svc.runOutput(run.id);
    expect(text).toContain('training FINISHED OK'); // still visible, as what beta printed
    // No escape at all: beta's text carried no colours, and every erase, home, reset and title is gone.
    expect(text).not.toContain('\x1b');
    expect(text).not.toContain('\x07');
  });
});

describe('addresses across machines', () => {
  const join = (node: string, seenFrom: string, coordinatorAddr: string, sameMachine: boolean) => {
    const j = svc.join(body(node, node, { advertiseHost: seenFrom }), { seenFrom, coordinatorAddr, sameMachine });
    svc.heartbeat(j.workerId, { incarnation: j.incarnation });
    return j;
  };
  const spec = { name: 'r', command: ['t.py'], samples: 30, minWorkers: 1, maxWorkers: 8, heartbeatTimeoutMs: 5000, maxRestarts: 3, nprocPerNode: 1, useGpus: false, launcher: 'torchrun' as const, env: {} };

  it('the app worker is handed the LAN address, never loopback, once a member is on another host', () => {
    const app = join('desk', '127.0.0.1', '127.0.0.1', true);
    join('beta', '10.213.0.2', '10.213.0.1', false);
    const run = svc.startRun(spec);
    expect(run.rdzvEndpoint).toMatch(/^10\.213\.0\.1:\d+$/);
    const plans = [0, 1].map((id) => svc.heartbeat(id, { incarnation: 1 }).instructions.find((i) => i.kind === 'start'));
    expect(plans.map((p) => (p?.kind === 'start' ? [p.plan.localAddr, p.plan.rdzvHost] : null))).toEqual([['10.213.0.1', true], ['10.213.0.2', false]]);
    expect(app.workerId).toBe(0);
  });

  it('members that cannot all reach one host: the run waits and says why instead of burning restarts', () => {
    join('desk', '127.0.0.1', '127.0.0.1', true);
    join('beta', '10.213.0.2', '10.213.0.1', false);
    join('gamma', 'fd00:213::3', 'fd00:213::1', false);
    const run = svc.startRun(spec);
    expect(run.state).toBe('waiting');
    expect(run.stateCause).toContain('no member can host the rendezvous');
    expect(run.restartsUsed).toBe(0);
    expect(svc.events().some((e) => e.kind === 'run-paused' && e.message.includes('gamma at fd00:213::3'))).toBe(true);
  });
});
