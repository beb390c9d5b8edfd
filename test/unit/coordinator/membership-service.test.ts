// Membership through the coordinator service (issue 15): no join is refused because of a run, the cluster's bound
// refuses strangers past it with a sentence that says how to raise it, and the heartbeat timeout is the
// cluster's (serve --heartbeat-timeout), whatever a run spec says.
import { describe, expect, it } from 'vitest';
import { ApiProblem } from '../../../src-main/core/coordinator/service/coordinator-service';
import { Harness } from './harness';

function problem(fn: () => unknown): ApiProblem {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiProblem) return e;
    throw e;
  }
  throw new Error('expected an ApiProblem');
}

describe('membership, cluster-wide', () => {
  it('a third machine joins while a run of max_workers 1 is live with two machines joined; the run is untouched', () => {
    const h = new Harness();
    const [alpha, beta] = h.activeWorkers('alpha', 'beta');
    h.svc.startRun(h.spec({ samples: 100, maxWorkers: 1 }));
    h.run(2000);
    const before = h.liveRun();
    expect(before).toMatchObject({ state: 'running', generation: 1, workerIds: [0] });
    const received = [alpha!.received.length, beta!.received.length];

    const gamma = h.worker('gamma').join();
    h.run(3000);

    expect(gamma.workerId).toBe(2);
    expect(h.svc.workers().map((w) => [w.node, w.state])).toEqual([
      ['alpha', 'active'],
      ['beta', 'active'],
      ['gamma', 'active'],
    ]);
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 1, workerIds: [0], restartsUsed: 0 });
    expect([alpha!.received.length, beta!.received.length]).toEqual(received);
    expect(gamma.received).toEqual([]);
    expect(h.eventMessages('worker-joined').at(-1)).toMatch(/^Worker gamma joined from 127\.0\.0\.1: /);
  });

  it('the cluster bound (serve --max-workers) refuses the machine past it, with the sentence; one that left makes room', () => {
    const h = new Harness({ maxWorkers: 2 });
    h.activeWorkers('alpha', 'beta');
    const full = problem(() => h.worker('gamma').join());
    expect(full.status).toBe(409);
    expect(full.message).toBe('gamma cannot join: the cluster is full: 2 of 2 machines joined (start the coordinator with gpu-share serve --max-workers N to allow more)');
    expect(h.svc.workers()).toHaveLength(2);
    // A run does not change the bound, up or down.
    h.svc.startRun(h.spec({ maxWorkers: 64 }));
    expect(problem(() => h.worker('delta').join()).status).toBe(409);
    h.svc.leave(1, { incarnation: 1, reason: 'shut down' });
    expect(h.worker('gamma').join().workerId).toBe(2);
  });

  it('the heartbeat timeout is the cluster’s: in the join answer and every heartbeat reply, and a run spec does not change it', () => {
    const h = new Harness({ heartbeatTimeoutMs: 2000 });
    const joined = h.svc.join(
      {
        node: 'alpha',
        agentVersion: 'test',
        machineId: 'machine-of-alpha-0000000000',
        gpus: [],
        cpuCores: 8,
        ramMb: 32768,
        advertiseHost: '127.0.0.1',
        rdzvPort: 29400,
        python: { path: '/usr/bin/python3', torchVersion: '1.13.0' },
        local: false,
      },
      '127.0.0.1',
    );
    expect(joined.heartbeatTimeoutMs).toBe(2000);
    const [beta] = h.activeWorkers('beta');
    // An old client's spec still carries its own timeout: accepted, and ignored.
    // …and the run shows the timeout that applies to its members, the cluster's.
    expect(h.svc.startRun(h.spec({ heartbeatTimeoutMs: 30_000 })).spec.heartbeatTimeoutMs).toBe(2000);
    expect(h.svc.heartbeat(joined.workerId, { incarnation: 1 }).heartbeatTimeoutMs).toBe(2000);
    expect(h.svc.heartbeat(beta!.workerId, { incarnation: 1 }).heartbeatTimeoutMs).toBe(2000);
    h.run(2000, [beta!], 500);
    h.clock.advance(500);
    h.svc.tick();
    expect(h.svc.workers().find((w) => w.node === 'alpha')).toMatchObject({ state: 'failed', stateCause: 'no heartbeat for 2.5 s' });
    expect(h.svc.workers().find((w) => w.node === 'beta')?.state).toBe('active');
  });

  it('a run spec with a shorter timeout does not fail a machine the cluster still waits for', () => {
    const h = new Harness({ heartbeatTimeoutMs: 5000 });
    const [alpha] = h.activeWorkers('alpha', 'beta');
    h.svc.startRun(h.spec({ heartbeatTimeoutMs: 1000 }));
    h.run(4000, [alpha!]);
    expect(h.svc.workers().map((w) => w.state)).toEqual(['active', 'active']);
    h.run(2000, [alpha!]);
    expect(h.svc.workers().map((w) => w.state)).toEqual(['active', 'failed']);
  });

  it('the session is the machine record\'s: a new join replaces it, the old secret is refused (401)', () => {
    const h = new Harness();
    const join = () =>
      h.svc.join(
        { node: 'alpha', agentVersion: 'test', machineId: 'machine-of-alpha-0000000000', gpus: [], cpuCores: 8, ramMb: 32768, advertiseHost: '127.0.0.1', rdzvPort: 29400, python: null, local: false },
        '127.0.0.1',
      );
    const first = join();
    expect(() => h.svc.authenticate(first.workerId, first.sessionSecret)).not.toThrow();
    const second = join();
    expect(second.workerId).toBe(first.workerId);
    expect(problem(() => h.svc.authenticate(first.workerId, first.sessionSecret)).status).toBe(401);
    expect(() => h.svc.authenticate(second.workerId, second.sessionSecret)).not.toThrow();
  });

  it('one record per machine: the snapshot is what its join and heartbeats said', () => {
    const h = new Harness();
    const [w] = h.activeWorkers('alpha');
    h.svc.heartbeat(w!.workerId, { incarnation: 1 });
    expect(h.svc.workers()).toEqual([
      {
        id: 0,
        node: 'alpha',
        incarnation: 1,
        state: 'active',
        stateCause: 'first heartbeat: ready to train',
        gpus: [],
        backend: 'cpu',
        joinedAt: h.clock.now(),
        lastHeartbeatAt: h.clock.now(),
        step: null,
        loss: null,
        samplesPerSec: null,
        address: '127.0.0.1',
        local: false,
        cpuCores: 8,
        ramMb: 32768,
      },
    ]);
  });
});
