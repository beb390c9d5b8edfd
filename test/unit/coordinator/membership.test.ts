// Cluster membership (membership.ts): twins of entrenar's elastic coordinator tests (seed 001) for what is still
// membership's — states, ids, heartbeats — plus what GPU Share adds: incarnations, causes, one record per machine,
// a bound that is the cluster's and never a run's, and the cluster's heartbeat timeout. The seed's run parts
// (generation, reconfig flag, should_pause, step) moved to the run groups, which test them there.
import { describe, expect, it } from 'vitest';
import { LIVE_STATES, type PoolTransition } from '../../../src-main/core/coordinator/membership/member-record';
import { Membership, type PoolJoinResult } from '../../../src-main/core/coordinator/membership/membership';
import { assignShards } from '../../../src-shared/shards';
import type { WorkerState } from '../../../src-shared/training';
import { FakeClock } from './fake-clock';
import { fields } from './member-fields';

function members(timeoutMs: number, maxMachines?: number, clock = new FakeClock()) {
  const transitions: PoolTransition[] = [];
  const p = new Membership({ clock, heartbeatTimeoutMs: timeoutMs, ...(maxMachines !== undefined ? { maxMachines } : {}), onTransition: (t) => transitions.push(t) });
  const add = (node: string, gpus = 1) => p.add(fields(node, gpus));
  return { p, clock, transitions, add };
}

const ids = (r: PoolJoinResult) => (r.ok ? r.workerId : null);

describe('membership — seed twins', () => {
  it('twin of test_elastic_coordinator_basic: a joined machine counts only once active', () => {
    const { p, add } = members(30000);
    expect(p.activeCount()).toBe(0);
    expect(ids(add('node-1'))).toBe(0);
    expect(p.activeCount()).toBe(0);
    p.activateWorker(0);
    expect(p.activeCount()).toBe(1);
  });

  it('twin of test_elastic_add_remove: draining and left machines are not active', () => {
    const { p, add } = members(30000);
    add('n1');
    add('n2');
    add('n3', 2);
    [0, 1, 2].forEach((i) => p.activateWorker(i));
    expect(p.activeCount()).toBe(3);
    p.removeWorker(1);
    expect(p.activeCount()).toBe(2);
    p.finalizeRemoval(1);
    expect(p.activeCount()).toBe(2);
  });

  it('twin of test_elastic_max_workers, now the cluster bound: the join past it is refused, saying how to raise it', () => {
    const { p, add } = members(30000, 2);
    add('n1');
    p.activateWorker(0);
    add('n2');
    const r = add('n3');
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.reason).toBe('the cluster is full: 2 of 2 machines joined (start the coordinator with gpu-share serve --max-workers N to allow more)');
    expect(p.allWorkers()).toHaveLength(2);
  });

  it('twin of test_elastic_shard_computation: 100 over the 3 active machines is [0,34) [34,67) [67,100)', () => {
    const { p, add } = members(30000);
    for (let i = 0; i < 3; i++) {
      add(`n${i}`);
      p.activateWorker(i);
    }
    expect(assignShards(100, p.activeWorkerIds())).toEqual([
      { workerId: 0, start: 0, end: 34 },
      { workerId: 1, start: 34, end: 67 },
      { workerId: 2, start: 67, end: 100 },
    ]);
  });

  it('twin of test_elastic_effective_world_size: only active machines count', () => {
    const { p, add } = members(30000);
    add('n1');
    add('n2');
    p.activateWorker(0);
    p.activateWorker(1);
    expect(p.activeCount()).toBe(2);
    p.removeWorker(0);
    expect(p.activeCount()).toBe(1);
  });

  it('twin of test_elastic_activate_non_syncing_worker: activating twice is refused', () => {
    const { p, add } = members(30000);
    add('n1');
    expect(p.activateWorker(0)).toBe(true);
    expect(p.activateWorker(0)).toBe(false);
  });

  it('twin of test_elastic_activate_nonexistent_worker: an unknown id is refused', () => {
    expect(members(30000).p.activateWorker(999)).toBe(false);
  });

  it('twin of test_elastic_remove_non_active_worker: a syncing machine cannot be drained', () => {
    const { p, add } = members(30000);
    add('n1');
    expect(p.removeWorker(0)).toBe(false);
    expect(p.worker(0)?.state).toBe('syncing');
  });

  it('twin of test_elastic_remove_nonexistent_worker: an unknown id is refused', () => {
    expect(members(30000).p.removeWorker(999)).toBe(false);
  });

  it('twin of test_elastic_finalize_removal_not_draining: an active machine cannot be finalized', () => {
    const { p, add } = members(30000);
    add('n1');
    p.activateWorker(0);
    expect(p.finalizeRemoval(0)).toBe(false);
    expect(p.worker(0)?.state).toBe('active');
  });

  it('twin of test_elastic_finalize_nonexistent_worker: an unknown id is refused', () => {
    expect(members(30000).p.finalizeRemoval(999)).toBe(false);
  });

  it('twin of test_elastic_update_heartbeat: refreshes both clocks; unknown ids are a no-op', () => {
    const { p, clock, add } = members(30000);
    add('n1');
    p.activateWorker(0);
    clock.advance(1234);
    expect(p.updateHeartbeat(0)).toBe(true);
    expect(p.worker(0)?.lastHeartbeat).toBe(1234);
    expect(p.worker(0)?.lastHeartbeatAt).toBe(clock.now());
    expect(p.updateHeartbeat(999)).toBe(false);
  });

  it('twin of test_elastic_check_heartbeats_no_timeout: nothing fails right away', () => {
    const { p, add } = members(30000);
    add('n1');
    p.activateWorker(0);
    expect(p.checkHeartbeats()).toEqual([]);
  });

  it('twin of test_elastic_check_heartbeats_instant_timeout: 0 ms timeout fails every active machine after 1 ms', () => {
    const { p, clock, add } = members(0);
    add('n1');
    p.activateWorker(0);
    add('n2');
    p.activateWorker(1);
    clock.advance(1);
    expect(p.checkHeartbeats()).toEqual([0, 1]);
    expect(p.activeCount()).toBe(0);
  });

  it('twin of test_elastic_all_workers: every machine with its node, GPU count, backend and state', () => {
    const { p, add } = members(30000);
    add('n1', 2);
    add('n2', 0);
    const all = p.allWorkers();
    expect(all).toHaveLength(2);
    expect(all[0]).toMatchObject({ nodeId: 'n1', node: 'n1', gpuCount: 2, backend: 'cuda', state: 'syncing' });
    expect(all[1]).toMatchObject({ nodeId: 'n2', gpuCount: 0, backend: 'cpu' });
  });

  it('twin of test_elastic_active_worker_ids: a syncing machine is left out', () => {
    const { p, add } = members(30000);
    add('n1');
    add('n2');
    add('n3');
    p.activateWorker(0);
    p.activateWorker(2);
    expect(p.activeWorkerIds()).toEqual([0, 2]);
  });

  it('twin of test_elastic_worker_state_transitions: syncing → active → draining → left', () => {
    const { p, add } = members(30000);
    add('n1');
    const state = () => p.allWorkers()[0]!.state;
    expect(state()).toBe('syncing');
    p.activateWorker(0);
    expect(state()).toBe('active');
    p.removeWorker(0);
    expect(state()).toBe('draining');
    p.finalizeRemoval(0);
    expect(state()).toBe('left');
  });

  it('twin of test_elastic_worker_id_increments: ids 0, 1, 2', () => {
    const { add } = members(30000);
    expect([add('n1'), add('n2'), add('n3')].map(ids)).toEqual([0, 1, 2]);
  });

  it('twin of test_worker_state_eq: the five states are distinct values, three of them live', () => {
    const states: WorkerState[] = ['active', 'syncing', 'draining', 'failed', 'left'];
    expect(new Set(states).size).toBe(5);
    expect(states.filter((s) => LIVE_STATES.has(s))).toEqual(['active', 'syncing', 'draining']);
  });

  it('twin of test_elastic_worker_clone: a snapshot keeps its fields and is independent of the record', () => {
    const { p, add } = members(30000);
    add('n1', 2);
    const copy = p.snapshot(0)!;
    p.activateWorker(0);
    copy.gpus[0]!.name = 'changed';
    expect(copy).toMatchObject({ id: 0, node: 'n1', backend: 'cuda', state: 'syncing' });
    expect(p.worker(0)!.state).toBe('active');
    expect(p.worker(0)!.gpus[0]!.name).toBe('NVIDIA GeForce RTX 4090');
  });
});

describe('membership — GPU Share additions', () => {
  it('fails a silent machine only strictly after the cluster timeout, with the silence in the cause', () => {
    const { p, clock, transitions, add } = members(5000);
    add('jetson');
    p.activateWorker(0);
    clock.advance(5000);
    expect(p.checkHeartbeats()).toEqual([]);
    clock.advance(200);
    expect(p.checkHeartbeats()).toEqual([0]);
    expect(p.worker(0)).toMatchObject({ state: 'failed', stateCause: 'no heartbeat for 5.2 s' });
    expect(transitions.at(-1)).toMatchObject({ workerId: 0, from: 'active', to: 'failed', cause: 'no heartbeat for 5.2 s' });
  });

  it('a failed machine rejoins with the same id and record, the next incarnation, at the end of the join order', () => {
    const { p, clock, transitions, add } = members(5000);
    add('a');
    add('b');
    p.activateWorker(0);
    p.activateWorker(1);
    const record = p.worker(0)!;
    record.mailbox.queue({ kind: 'drain', reason: 'old' });
    record.leaveReceived = true;
    clock.advance(3000);
    p.updateHeartbeat(1);
    clock.advance(3000);
    expect(p.checkHeartbeats()).toEqual([0]);
    const r = p.rejoinWorker(0, { ...fields('a', 2), rdzvPort: 29500 });
    expect(r).toEqual({ ok: true, workerId: 0, incarnation: 2 });
    expect(transitions.at(-1)).toMatchObject({ workerId: 0, from: 'failed', to: 'syncing', rejoined: true, incarnation: 2 });
    // One record per machine: the same object, with what the new join said and nothing of the old conversation.
    expect(p.worker(0)).toBe(record);
    expect(record).toMatchObject({ gpuCount: 2, rdzvPort: 29500, leaveReceived: false, progress: null });
    expect(record.mailbox.handOut(undefined).instructions).toEqual([]);
    p.activateWorker(0);
    expect(p.activeWorkerIds()).toEqual([1, 0]);
    expect(p.allWorkers()).toHaveLength(2);
  });

  it('refuses to rejoin a machine that is still live', () => {
    const { p, add } = members(5000);
    add('a');
    expect(p.rejoinWorker(0, fields('a')).ok).toBe(false);
  });

  it('a draining machine that goes silent has left, it has not failed', () => {
    const { p, clock, add } = members(1000);
    add('a');
    p.activateWorker(0);
    p.removeWorker(0);
    clock.advance(1500);
    expect(p.checkHeartbeats()).toEqual([]);
    expect(p.worker(0)).toMatchObject({ state: 'left', stateCause: 'drain finished: no heartbeat for 1.5 s' });
  });

  it('a syncing machine that never heartbeats is failed after the timeout', () => {
    const { p, clock, add } = members(1000);
    add('a');
    clock.advance(1001);
    expect(p.checkHeartbeats()).toEqual([0]);
    expect(p.worker(0)?.stateCause).toBe('no heartbeat within 1.0 s of joining');
  });

  it('every transition carries a cause', () => {
    const { p, transitions, add } = members(1000);
    add('a');
    p.activateWorker(0);
    p.leaveWorker(0, 'left: agent shut down');
    expect(transitions.map((t) => [t.from, t.to, t.cause])).toEqual([
      [null, 'syncing', 'joined'],
      ['syncing', 'active', 'first heartbeat: ready to train'],
      ['active', 'left', 'left: agent shut down'],
    ]);
  });

  it('the bound counts machines joined, not machines active: syncing ones count, failed and left ones make room', () => {
    const { p, clock, add } = members(1000, 2);
    add('a');
    add('b');
    expect(add('c').ok).toBe(false);
    p.activateWorker(0);
    p.leaveWorker(0, 'left');
    expect(ids(add('c'))).toBe(2);
    clock.advance(1001);
    expect(p.checkHeartbeats()).toEqual([1, 2]);
    expect(ids(add('d'))).toBe(3);
    // A machine coming back is a join like any other: refused while the cluster is full.
    expect(add('e').ok).toBe(true);
    const back = p.rejoinWorker(0, fields('a'));
    expect(back.ok ? '' : back.reason).toMatch(/^the cluster is full: 2 of 2 machines joined/);
  });

  it('a stranger cannot grow the cluster past its bound, however many names it tries', () => {
    const { p, add } = members(1000, 5);
    for (let i = 0; i < 1000; i++) add(`stranger-${i}`);
    expect(p.liveCount()).toBe(5);
    expect(p.allWorkers()).toHaveLength(5);
  });

  it('one name is one record: a second add of a known name is refused, the name finds the record', () => {
    const { p, add } = members(1000);
    add('a');
    expect(add('a').ok).toBe(false);
    expect(p.idForNode('a')).toBe(0);
    expect(p.hasNode('b')).toBe(false);
  });

  it('forgets the oldest gone machines past 100, except the ones kept, and frees their names', () => {
    const { p, add } = members(1000);
    for (let i = 0; i < 103; i++) {
      add(`n${i}`);
      p.leaveWorker(i, 'left');
    }
    expect(p.pruneGone(new Set([1]))).toEqual([0, 2]);
    expect(p.allWorkers()).toHaveLength(101);
    expect(p.hasNode('n0')).toBe(false);
    expect(p.hasNode('n1')).toBe(true);
  });

  it('queues instructions only for a live machine; a goodbye clears them and refuses later talk until it joins again', () => {
    const { p, add } = members(1000);
    add('a');
    p.activateWorker(0);
    expect(p.queue(0, { kind: 'drain', reason: 'x' })).toBe(true);
    expect(p.queue(9, { kind: 'drain', reason: 'x' })).toBe(false);
    expect(() => p.goodbye(0, 2, 'shut down')).toThrow(/^stale leave: worker 0 \(a\) is at incarnation 1/);
    expect(p.goodbye(0, 1, 'shut down')).toBe(p.worker(0));
    expect(p.worker(0)).toMatchObject({ state: 'left', stateCause: 'left: shut down', leaveReceived: true });
    expect(p.worker(0)!.mailbox.handOut(undefined).instructions).toEqual([]);
    expect(p.queue(0, { kind: 'drain', reason: 'x' })).toBe(false);
    expect(p.goodbye(0, 1, 'again')).toBeNull();
    expect(() => p.liveRecord(0, 1, 'heartbeat')).toThrow(/has left \(left: shut down\); join again/);
    expect(p.isCurrent(0, 1)).toBe(false);
    expect(() => p.requireLive(0)).toThrow('worker 0 (a) is left; join again');
  });

  it('a drain takes an active machine only, tells it, and a draining machine\'s goodbye finishes the drain', () => {
    const { p, add } = members(1000);
    add('a');
    expect(() => p.drain(0, 'drained by user')).toThrow('worker 0 (a) is syncing; only an active worker can be drained');
    p.activateWorker(0);
    expect(p.isCurrent(0, 1)).toBe(true);
    expect(p.drain(0, 'drained by user')).toBe(true);
    expect(p.drain(0, 'drained by user')).toBe(false);
    expect(p.worker(0)!.mailbox.handOut(undefined).instructions).toEqual([{ kind: 'drain', reason: 'drained by user' }]);
    p.goodbye(0, 1, 'left');
    expect(p.worker(0)).toMatchObject({ state: 'left', stateCause: 'drain finished: left' });
  });

  it('a machine restored from the state database keeps its id, and later ids continue after it', () => {
    const { p, add } = members(1000);
    p.restore({ id: 7, node: 'old', gpus: [], address: '10.0.0.9', local: false, lastHeartbeatAt: 5, incarnation: 3, joinedAt: 4, state: 'failed', stateCause: 'the coordinator restarted' });
    expect(p.snapshot(7)).toMatchObject({ id: 7, node: 'old', incarnation: 3, state: 'failed', joinedAt: 4, lastHeartbeatAt: 5, backend: 'cpu' });
    expect(ids(add('new'))).toBe(8);
    expect(p.idForNode('old')).toBe(7);
  });
});
