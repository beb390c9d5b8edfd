// Twins of entrenar's elastic coordinator tests (seed 001), plus what GPU Share adds: incarnations,
// generation, causes, and the shared shard rule.
import { describe, expect, it } from 'vitest';
import { ElasticPool, type PoolTransition } from '../../../src-main/core/coordinator/elastic-pool';
import { assignShards } from '../../../src-shared/shards';
import type { WorkerState } from '../../../src-shared/training';
import { FakeClock } from './fake-clock';

function pool(min: number, max: number, timeoutMs: number, clock = new FakeClock()) {
  const transitions: PoolTransition[] = [];
  const p = new ElasticPool({ clock, minWorkers: min, maxWorkers: max, heartbeatTimeoutMs: timeoutMs, onTransition: (t) => transitions.push(t) });
  return { p, clock, transitions };
}

const ids = (r: ReturnType<ElasticPool['addWorker']>) => (r.ok ? r.workerId : null);

describe('elastic pool — seed twins', () => {
  it('twin of test_elastic_coordinator_basic: a joined worker counts only once active', () => {
    const { p } = pool(1, 8, 30000);
    expect(p.activeCount()).toBe(0);
    expect(p.shouldPause()).toBe(true);
    expect(ids(p.addWorker('node-1', 1, 'cuda'))).toBe(0);
    expect(p.activeCount()).toBe(0);
    p.activateWorker(0);
    expect(p.activeCount()).toBe(1);
    expect(p.shouldPause()).toBe(false);
  });

  it('twin of test_elastic_add_remove: draining and left workers are not active', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    p.addWorker('n2', 1, 'cuda');
    p.addWorker('n3', 2, 'wgpu');
    [0, 1, 2].forEach((i) => p.activateWorker(i));
    expect(p.activeCount()).toBe(3);
    p.removeWorker(1);
    expect(p.activeCount()).toBe(2);
    p.finalizeRemoval(1);
    expect(p.activeCount()).toBe(2);
  });

  it('twin of test_elastic_max_workers: a join into a full pool is refused with the reason', () => {
    const { p } = pool(1, 2, 30000);
    p.addWorker('n1', 1, 'cuda');
    p.activateWorker(0);
    p.addWorker('n2', 1, 'cuda');
    p.activateWorker(1);
    const r = p.addWorker('n3', 1, 'cuda');
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.reason).toBe('the run is full: 2 of 2 workers active (max_workers 2)');
    expect(p.allWorkers()).toHaveLength(2);
  });

  it('twin of test_elastic_shard_computation: 100 over 3 is [0,34) [34,67) [67,100)', () => {
    const { p } = pool(1, 4, 30000);
    for (let i = 0; i < 3; i++) {
      p.addWorker(`n${i}`, 1, 'cuda');
      p.activateWorker(i);
    }
    const shards = p.computeShards(100);
    expect(shards).toEqual([
      { workerId: 0, start: 0, end: 34 },
      { workerId: 1, start: 34, end: 67 },
      { workerId: 2, start: 67, end: 100 },
    ]);
    expect(shards.reduce((s, x) => s + x.end - x.start, 0)).toBe(100);
  });

  it('twin of test_elastic_shard_disjointness: 10007 samples over 5 workers, each covered exactly once', () => {
    const { p } = pool(1, 8, 30000);
    for (let i = 0; i < 5; i++) {
      p.addWorker(`n${i}`, 1, 'cuda');
      p.activateWorker(i);
    }
    const total = 10007;
    const covered = new Uint8Array(total);
    for (const s of p.computeShards(total)) for (let i = s.start; i < s.end; i++) covered[i]! += 1;
    expect(covered.every((c) => c === 1)).toBe(true);
  });

  it('twin of test_elastic_reconfig_flag: set by a join, cleared explicitly', () => {
    const { p } = pool(1, 4, 30000);
    expect(p.needsReconfig()).toBe(false);
    p.addWorker('n1', 1, 'cuda');
    expect(p.needsReconfig()).toBe(true);
    p.clearReconfig();
    expect(p.needsReconfig()).toBe(false);
  });

  it('twin of test_elastic_should_pause: pause while active < min_workers', () => {
    const { p } = pool(2, 4, 30000);
    expect(p.shouldPause()).toBe(true);
    p.addWorker('n1', 1, 'cuda');
    p.activateWorker(0);
    expect(p.shouldPause()).toBe(true);
    p.addWorker('n2', 1, 'cuda');
    p.activateWorker(1);
    expect(p.shouldPause()).toBe(false);
  });

  it('twin of test_elastic_effective_world_size: only active workers count', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    p.addWorker('n2', 1, 'cuda');
    p.activateWorker(0);
    p.activateWorker(1);
    expect(p.effectiveWorldSize()).toBe(2);
    p.removeWorker(0);
    expect(p.effectiveWorldSize()).toBe(1);
  });

  it('twin of test_elastic_activate_non_syncing_worker: activating twice is refused', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    expect(p.activateWorker(0)).toBe(true);
    expect(p.activateWorker(0)).toBe(false);
  });

  it('twin of test_elastic_activate_nonexistent_worker: an unknown id is refused', () => {
    expect(pool(1, 4, 30000).p.activateWorker(999)).toBe(false);
  });

  it('twin of test_elastic_remove_non_active_worker: a syncing worker cannot be drained', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    expect(p.removeWorker(0)).toBe(false);
    expect(p.worker(0)?.state).toBe('syncing');
  });

  it('twin of test_elastic_remove_nonexistent_worker: an unknown id is refused', () => {
    expect(pool(1, 4, 30000).p.removeWorker(999)).toBe(false);
  });

  it('twin of test_elastic_finalize_removal_not_draining: an active worker cannot be finalized', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    p.activateWorker(0);
    expect(p.finalizeRemoval(0)).toBe(false);
    expect(p.worker(0)?.state).toBe('active');
  });

  it('twin of test_elastic_finalize_nonexistent_worker: an unknown id is refused', () => {
    expect(pool(1, 4, 30000).p.finalizeRemoval(999)).toBe(false);
  });

  it('twin of test_elastic_update_heartbeat: refreshes the timestamp; unknown ids are a no-op', () => {
    const { p, clock } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    p.activateWorker(0);
    clock.advance(1234);
    expect(p.updateHeartbeat(0)).toBe(true);
    expect(p.worker(0)?.lastHeartbeat).toBe(1234);
    expect(p.updateHeartbeat(999)).toBe(false);
  });

  it('twin of test_elastic_check_heartbeats_no_timeout: nothing fails right away', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    p.activateWorker(0);
    expect(p.checkHeartbeats()).toEqual([]);
  });

  it('twin of test_elastic_check_heartbeats_instant_timeout: 0 ms timeout fails every active worker after 1 ms', () => {
    const { p, clock } = pool(1, 4, 0);
    p.addWorker('n1', 1, 'cuda');
    p.activateWorker(0);
    p.addWorker('n2', 1, 'cuda');
    p.activateWorker(1);
    p.clearReconfig();
    clock.advance(1);
    expect(p.checkHeartbeats()).toEqual([0, 1]);
    expect(p.needsReconfig()).toBe(true);
    expect(p.activeCount()).toBe(0);
  });

  it('twin of test_elastic_set_step: joinedAtStep is the step at join time', () => {
    const { p } = pool(1, 4, 30000);
    p.setStep(42);
    p.addWorker('n1', 1, 'cuda');
    expect(p.allWorkers()[0]!.joinedAtStep).toBe(42);
  });

  it('twin of test_elastic_compute_shards_empty: no active workers, no shards', () => {
    expect(pool(1, 4, 30000).p.computeShards(100)).toEqual([]);
  });

  it('twin of test_elastic_compute_shards_single_worker: one worker gets everything', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    p.activateWorker(0);
    expect(p.computeShards(100)).toEqual([{ workerId: 0, start: 0, end: 100 }]);
  });

  it('twin of test_elastic_compute_shards_even_division: 100 over 4 is 25 each', () => {
    const { p } = pool(1, 4, 30000);
    for (let i = 0; i < 4; i++) {
      p.addWorker(`n${i}`, 1, 'cuda');
      p.activateWorker(i);
    }
    const shards = p.computeShards(100);
    expect(shards).toHaveLength(4);
    expect(shards.map((s) => s.end - s.start)).toEqual([25, 25, 25, 25]);
  });

  it('twin of test_elastic_compute_shards_zero_samples: an empty range per worker', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    p.activateWorker(0);
    expect(p.computeShards(0)).toEqual([{ workerId: 0, start: 0, end: 0 }]);
  });

  it('twin of test_elastic_all_workers: every worker with its node, GPU count, backend and state', () => {
    const { p } = pool(1, 8, 30000);
    p.addWorker('n1', 2, 'cuda');
    p.addWorker('n2', 4, 'wgpu');
    const all = p.allWorkers();
    expect(all).toHaveLength(2);
    expect(all[0]).toMatchObject({ nodeId: 'n1', gpuCount: 2, backend: 'cuda', state: 'syncing' });
    expect(all[1]).toMatchObject({ nodeId: 'n2', gpuCount: 4 });
  });

  it('twin of test_elastic_active_worker_ids: a syncing worker is left out', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    p.addWorker('n2', 1, 'cuda');
    p.addWorker('n3', 1, 'cuda');
    p.activateWorker(0);
    p.activateWorker(2);
    expect(p.activeWorkerIds()).toEqual([0, 2]);
  });

  it('twin of test_elastic_worker_state_transitions: syncing → active → draining → left', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
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
    const { p } = pool(1, 8, 30000);
    expect([p.addWorker('n1', 1, 'cuda'), p.addWorker('n2', 1, 'cuda'), p.addWorker('n3', 1, 'cuda')].map(ids)).toEqual([0, 1, 2]);
  });

  it('twin of test_elastic_clear_reconfig_then_add: a later join sets the flag again', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    p.clearReconfig();
    expect(p.needsReconfig()).toBe(false);
    p.addWorker('n2', 1, 'cuda');
    expect(p.needsReconfig()).toBe(true);
  });

  it('twin of test_elastic_remove_sets_reconfig: a drain sets the flag', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 1, 'cuda');
    p.activateWorker(0);
    p.clearReconfig();
    p.removeWorker(0);
    expect(p.needsReconfig()).toBe(true);
  });

  it('twin of test_worker_state_eq: the five states are distinct values', () => {
    const states: WorkerState[] = ['active', 'syncing', 'draining', 'failed', 'left'];
    expect(new Set(states).size).toBe(5);
    const same: WorkerState = 'active';
    expect(same).toBe('active');
    expect<WorkerState>('active').not.toBe('syncing');
    expect<WorkerState>('draining').not.toBe('failed');
  });

  it('twin of test_elastic_worker_clone: a copy keeps its fields and is independent of the pool', () => {
    const { p } = pool(1, 4, 30000);
    p.addWorker('n1', 2, 'wgpu');
    const copy = structuredClone(p.allWorkers()[0]!);
    p.activateWorker(0);
    expect(copy).toMatchObject({ nodeId: 'n1', gpuCount: 2, backend: 'wgpu', state: 'syncing' });
    expect(p.allWorkers()[0]!.state).toBe('active');
  });
});

describe('elastic pool — GPU Share additions', () => {
  it('fails a silent worker only strictly after the timeout, with the silence in the cause', () => {
    const { p, clock, transitions } = pool(1, 4, 5000);
    p.addWorker('jetson', 1, 'cuda');
    p.activateWorker(0);
    clock.advance(5000);
    expect(p.checkHeartbeats()).toEqual([]);
    clock.advance(200);
    expect(p.checkHeartbeats()).toEqual([0]);
    expect(p.worker(0)).toMatchObject({ state: 'failed', stateCause: 'no heartbeat for 5.2 s' });
    expect(transitions.at(-1)).toMatchObject({ workerId: 0, from: 'active', to: 'failed', cause: 'no heartbeat for 5.2 s' });
  });

  it('a failed worker rejoins with the same id and the next incarnation, at the end of the join order', () => {
    const { p, clock, transitions } = pool(1, 4, 5000);
    p.addWorker('a', 1, 'cuda');
    p.addWorker('b', 1, 'cuda');
    p.activateWorker(0);
    p.activateWorker(1);
    clock.advance(3000);
    p.updateHeartbeat(1);
    clock.advance(3000);
    expect(p.checkHeartbeats()).toEqual([0]);
    const r = p.rejoinWorker(0, 1, 'cuda');
    expect(r).toEqual({ ok: true, workerId: 0, incarnation: 2 });
    expect(transitions.at(-1)).toMatchObject({ workerId: 0, from: 'failed', to: 'syncing', rejoined: true, incarnation: 2 });
    p.activateWorker(0);
    expect(p.activeWorkerIds()).toEqual([1, 0]);
    expect(p.allWorkers()).toHaveLength(2);
  });

  it('refuses to rejoin a worker that is still live', () => {
    const { p } = pool(1, 4, 5000);
    p.addWorker('a', 1, 'cuda');
    expect(p.rejoinWorker(0, 1, 'cuda').ok).toBe(false);
  });

  it('a draining worker that goes silent has left, it has not failed', () => {
    const { p, clock } = pool(1, 4, 1000);
    p.addWorker('a', 1, 'cuda');
    p.activateWorker(0);
    p.removeWorker(0);
    clock.advance(1500);
    expect(p.checkHeartbeats()).toEqual([]);
    expect(p.worker(0)).toMatchObject({ state: 'left', stateCause: 'drain finished: no heartbeat for 1.5 s' });
  });

  it('a syncing worker that never heartbeats is failed after the timeout', () => {
    const { p, clock } = pool(1, 4, 1000);
    p.addWorker('a', 1, 'cuda');
    clock.advance(1001);
    expect(p.checkHeartbeats()).toEqual([0]);
    expect(p.worker(0)?.stateCause).toBe('no heartbeat within 1.0 s of joining');
  });

  it('bumps the generation on every change of the active set, and only then', () => {
    const { p, clock } = pool(1, 4, 1000);
    p.addWorker('a', 1, 'cuda');
    expect(p.generation).toBe(0);
    p.activateWorker(0);
    expect(p.generation).toBe(1);
    p.addWorker('b', 1, 'cuda');
    expect(p.generation).toBe(1);
    p.activateWorker(1);
    p.removeWorker(1);
    expect(p.generation).toBe(3);
    p.finalizeRemoval(1);
    expect(p.generation).toBe(3);
    clock.advance(1001);
    p.checkHeartbeats();
    expect(p.generation).toBe(4);
  });

  it('every transition carries a cause', () => {
    const { p, transitions } = pool(1, 4, 1000);
    p.addWorker('a', 1, 'cuda');
    p.activateWorker(0);
    p.leaveWorker(0, 'left: agent shut down');
    expect(transitions.map((t) => [t.from, t.to, t.cause])).toEqual([
      [null, 'syncing', 'joined'],
      ['syncing', 'active', 'first heartbeat: ready to train'],
      ['active', 'left', 'left: agent shut down'],
    ]);
  });

  it('assignShards follows the given order, not the ids', () => {
    expect(assignShards(10, [5, 2, 9])).toEqual([
      { workerId: 5, start: 0, end: 4 },
      { workerId: 2, start: 4, end: 7 },
      { workerId: 9, start: 7, end: 10 },
    ]);
    expect(assignShards(10, [])).toEqual([]);
  });
});
