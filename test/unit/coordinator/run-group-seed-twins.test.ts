/**
 * Twins of the seed's elastic-coordinator tests whose concepts moved from cluster membership to run groups in
 * issue 15 (shards, the "needs reconfig" flag, should-pause, the step a joiner starts at). The old pool flag is now
 * "the run starts a new generation"; shards are the run's shard map (assignShards over a generation's members).
 */
import { describe, expect, it } from 'vitest';
import { assignShards } from '../../../src-shared/shards';
import type { ShardMap } from '../../../src-shared/training';
import { Harness } from './harness';

const run = (h: Harness, id: string) => h.svc.runs().find((r) => r.id === id)!;

/** How many shards of `map` cover each sample of [0, total). */
function coverage(map: { shards: readonly Pick<ShardMap['shards'][number], 'start' | 'end'>[] }, total: number): Uint8Array {
  const covered = new Uint8Array(total);
  for (const s of map.shards) for (let i = s.start; i < s.end; i++) covered[i]! += 1;
  return covered;
}

describe('seed twins now about run groups — shards', () => {
  it('twin of test_elastic_shard_disjointness: 10007 samples over a generation of 5 members, each covered exactly once', () => {
    const shards = assignShards(10007, [0, 1, 2, 3, 4]);
    expect(shards).toHaveLength(5);
    expect(coverage({ shards }, 10007).every((c) => c === 1)).toBe(true);
  });

  it('twin of test_elastic_shard_disjointness, through a run: every generation in shardHistory covers [0, N) disjointly', () => {
    const h = new Harness();
    const [a, b, c] = h.activeWorkers('alpha', 'beta', 'gamma');
    const r = h.svc.startRun(h.spec({ name: 'disjoint', samples: 1001, maxWorkers: 5 }));
    h.run(1000);
    h.worker('delta').join().beat();
    h.run(2000); // settles, grows to generation 2
    h.svc.drainWorker(b!.workerId); // generation 3 without beta
    h.run(1000, [a!, c!, ...h.workers.filter((w) => w.node === 'delta')]);
    const history = run(h, r.id).shardHistory;
    expect(history.map((m) => m.shards.length)).toEqual([3, 4, 3]);
    for (const map of history) {
      expect(map.totalSamples).toBe(1001);
      expect(coverage(map, 1001).every((n) => n === 1), `generation ${map.generation}`).toBe(true);
    }
    // The members' launch plans carry the current map's ranges.
    expect([a!.shard(), c!.shard()]).toEqual(history.at(-1)!.shards.slice(0, 2).map((s) => [s.start, s.end]));
  });

  it('twin of test_elastic_compute_shards_empty: a generation with no members has no shards', () => {
    expect(assignShards(100, [])).toEqual([]);
  });

  it('twin of test_elastic_compute_shards_empty, through a run: a run with no worker waits with an empty shard history', () => {
    const h = new Harness();
    const r = h.svc.startRun(h.spec({ samples: 100 }));
    h.run(2000);
    expect(run(h, r.id)).toMatchObject({ state: 'waiting', generation: 0, workerIds: [], shardHistory: [] });
  });

  it('twin of test_elastic_compute_shards_single_worker: one member gets [0, 100), in its launch plan too', () => {
    expect(assignShards(100, [7])).toEqual([{ workerId: 7, start: 0, end: 100 }]);
    const h = new Harness();
    const [a] = h.activeWorkers('alpha');
    const r = h.svc.startRun(h.spec({ samples: 100 }));
    h.run(1000);
    expect(run(h, r.id).shardHistory.at(-1)!.shards).toEqual([{ workerId: a!.workerId, node: 'alpha', start: 0, end: 100 }]);
    expect(a!.shard()).toEqual([0, 100]);
  });

  it('twin of test_elastic_compute_shards_even_division: 100 over 4 members is 25 each, contiguous', () => {
    const shards = assignShards(100, [0, 1, 2, 3]);
    expect(shards.map((s) => [s.start, s.end])).toEqual([[0, 25], [25, 50], [50, 75], [75, 100]]);
    const h = new Harness();
    const ws = h.activeWorkers('a', 'b', 'c', 'd');
    h.svc.startRun(h.spec({ samples: 100, minWorkers: 4, maxWorkers: 4 }));
    h.run(1000);
    expect(ws.map((w) => w.shard())).toEqual([[0, 25], [25, 50], [50, 75], [75, 100]]);
  });

  it('twin of test_elastic_compute_shards_zero_samples: each member gets an empty range', () => {
    expect(assignShards(0, [3])).toEqual([{ workerId: 3, start: 0, end: 0 }]);
    expect(assignShards(0, [0, 1]).map((s) => s.end - s.start)).toEqual([0, 0]);
  });
});

describe('seed twins now about run groups — re-planning (the old reconfig flag)', () => {
  it('twin of test_elastic_reconfig_flag: a join re-plans a run below max_workers (after the settle), and nothing else does', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('alpha');
    const r = h.svc.startRun(h.spec({ maxWorkers: 3 }));
    h.run(5000);
    expect(run(h, r.id)).toMatchObject({ state: 'running', generation: 1 }); // cleared: no change, no new generation
    const b = h.worker('beta').join();
    b.beat();
    expect(run(h, r.id).generation).toBe(1); // still settling
    h.run(2000);
    expect(run(h, r.id)).toMatchObject({ generation: 2, workerIds: [a!.workerId, b.workerId] });
    expect(run(h, r.id).shardHistory.at(-1)!.cause).toBe('workers joined');
    h.run(5000);
    expect(run(h, r.id).generation).toBe(2); // cleared again once applied
  });

  it('twin of test_elastic_clear_reconfig_then_add: after a join was applied, a later join re-plans again', () => {
    const h = new Harness();
    h.activeWorkers('alpha');
    const r = h.svc.startRun(h.spec({ maxWorkers: 4 }));
    h.worker('beta').join().beat();
    h.run(2000);
    expect(run(h, r.id).generation).toBe(2);
    h.run(5000);
    expect(run(h, r.id).generation).toBe(2);
    const c = h.worker('gamma').join();
    c.beat();
    h.run(2000);
    expect(run(h, r.id)).toMatchObject({ generation: 3 });
    expect(run(h, r.id).workerIds).toContain(c.workerId);
    expect(c.running?.generation).toBe(3);
  });

  it('twin of test_elastic_remove_sets_reconfig: draining a member starts a new generation without it', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('alpha', 'beta');
    const r = h.svc.startRun(h.spec({ samples: 100, maxWorkers: 2 }));
    h.run(3000);
    expect(run(h, r.id).generation).toBe(1);
    h.svc.drainWorker(b!.workerId);
    expect(run(h, r.id)).toMatchObject({ state: 'running', generation: 2, workerIds: [a!.workerId] });
    expect(run(h, r.id).shardHistory.at(-1)!.shards).toEqual([{ workerId: a!.workerId, node: 'alpha', start: 0, end: 100 }]);
    h.run(1000, [a!]);
    expect(a!.running?.generation).toBe(2);
  });
});

describe('seed twins now about run groups — pause and step', () => {
  it('twin of test_elastic_should_pause: a run with min_workers 2 waits with one active member, runs with two, pauses back at one', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('alpha');
    const r = h.svc.startRun(h.spec({ minWorkers: 2, maxWorkers: 2, maxRestarts: 5 }));
    expect(run(h, r.id)).toMatchObject({ state: 'waiting', generation: 0 });
    expect(run(h, r.id).stateCause).toMatch(/^waits for 1 more worker/);
    h.run(2000);
    expect(a!.running).toBeNull();
    const b = h.worker('beta').join();
    b.beat();
    h.run(2000);
    expect(run(h, r.id)).toMatchObject({ state: 'running', workerIds: [a!.workerId, b.workerId] });
    h.run(7000, [a!]); // beta goes silent
    expect(run(h, r.id).state).toBe('paused');
  });

  it('twin of test_elastic_set_step (membership keeps no joinedAtStep now): a member joining at step 42 starts a generation marked where the run had reached', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('alpha');
    const r = h.svc.startRun(h.spec({ maxWorkers: 2 }));
    h.run(1000);
    a!.setStep(42, 1.5);
    h.run(1000);
    expect(run(h, r.id).progress?.step).toBe(42);
    const b = h.worker('beta').join();
    b.beat();
    h.run(2000);
    const grown = run(h, r.id);
    expect(grown.generation).toBe(2);
    expect(grown.generationMarks.at(-1)).toMatchObject({ generation: 2, step: 43 });
    // The joiner's first progress line says where generation 2 resumed from: the mark moves there.
    b.setStep(42, 1.4, null, 42);
    h.run(1000);
    expect(run(h, r.id).generationMarks.at(-1)).toMatchObject({ generation: 2, step: 42 });
    expect(run(h, r.id).workerRows.find((w) => w.workerId === b.workerId)).toMatchObject({ member: true, step: 42 });
  });
});
