// Random sequences of what can happen to a cluster; after every step the pool's invariants must hold.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ElasticPool, LIVE_STATES } from '../../../src-main/core/coordinator/elastic-pool';
import { FakeClock } from './fake-clock';

type Op =
  | { op: 'join'; node: number }
  | { op: 'activate'; pick: number }
  | { op: 'heartbeat'; pick: number }
  | { op: 'advance'; ms: number }
  | { op: 'check' }
  | { op: 'drain'; pick: number }
  | { op: 'finalize'; pick: number }
  | { op: 'fail'; pick: number }
  | { op: 'rejoin'; pick: number }
  | { op: 'leave'; pick: number }
  | { op: 'clear' };

const pick = fc.nat({ max: 40 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('join' as const), node: fc.nat({ max: 12 }) }),
  fc.record({ op: fc.constant('activate' as const), pick }),
  fc.record({ op: fc.constant('heartbeat' as const), pick }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3000 }) }),
  fc.record({ op: fc.constant('check' as const) }),
  fc.record({ op: fc.constant('drain' as const), pick }),
  fc.record({ op: fc.constant('finalize' as const), pick }),
  fc.record({ op: fc.constant('fail' as const), pick }),
  fc.record({ op: fc.constant('rejoin' as const), pick }),
  fc.record({ op: fc.constant('leave' as const), pick }),
  fc.record({ op: fc.constant('clear' as const) }),
);

describe('elastic pool — property', () => {
  it('shards stay disjoint and complete over the active workers; pause ⇔ active < min; generation never goes down; ids unique', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.array(opArb, { maxLength: 120 }),
        (min, extra, samples, ops) => {
          const max = min + extra;
          const clock = new FakeClock();
          const p = new ElasticPool({ clock, minWorkers: min, maxWorkers: max, heartbeatTimeoutMs: 2000 });
          const incarnations = new Map<number, number>();
          let lastGeneration = p.generation;
          const idOf = (n: number) => {
            const all = p.allWorkers();
            return all.length === 0 ? 999 : all[n % all.length]!.workerId;
          };
          for (const o of ops) {
            switch (o.op) {
              case 'join': {
                const before = p.activeCount();
                const r = p.addWorker(`n${o.node}`, 1, 'cpu');
                expect(r.ok).toBe(before < max);
                break;
              }
              case 'activate':
                p.activateWorker(idOf(o.pick));
                break;
              case 'heartbeat': {
                const w = p.worker(idOf(o.pick));
                if (w && LIVE_STATES.has(w.state)) p.updateHeartbeat(w.workerId);
                break;
              }
              case 'advance':
                clock.advance(o.ms);
                break;
              case 'check':
                for (const id of p.checkHeartbeats()) expect(p.worker(id)?.state).toBe('failed');
                break;
              case 'drain':
                p.removeWorker(idOf(o.pick));
                break;
              case 'finalize':
                p.finalizeRemoval(idOf(o.pick));
                break;
              case 'fail':
                p.failWorker(idOf(o.pick), 'process exited with signal 9');
                break;
              case 'rejoin':
                p.rejoinWorker(idOf(o.pick), 1, 'cpu');
                break;
              case 'leave':
                p.leaveWorker(idOf(o.pick), 'left: agent shut down');
                break;
              case 'clear':
                p.clearReconfig();
                break;
            }

            const all = p.allWorkers();
            const active = all.filter((w) => w.state === 'active');
            // ids unique, assigned from 0 upward
            const idList = all.map((w) => w.workerId);
            expect(new Set(idList).size).toBe(idList.length);
            expect([...idList].sort((a, b) => a - b)).toEqual(idList.map((_, i) => i));
            // incarnations never go down
            for (const w of all) {
              expect(w.incarnation).toBeGreaterThanOrEqual(incarnations.get(w.workerId) ?? 1);
              incarnations.set(w.workerId, w.incarnation);
            }
            // pause ⇔ active < min
            expect(p.shouldPause()).toBe(active.length < min);
            expect(p.effectiveWorldSize()).toBe(active.length);
            // shards: one per active worker, contiguous from 0 to samples, nothing for a non-active worker
            const shards = p.computeShards(samples);
            expect(shards.map((s) => s.workerId).sort((a, b) => a - b)).toEqual(active.map((w) => w.workerId).sort((a, b) => a - b));
            let cursor = 0;
            for (const s of shards) {
              expect(s.start).toBe(cursor);
              expect(s.end).toBeGreaterThanOrEqual(s.start);
              cursor = s.end;
            }
            expect(cursor).toBe(active.length > 0 ? samples : 0);
            if (shards.length > 0) {
              const sizes = shards.map((s) => s.end - s.start);
              expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
            }
            // generation never goes down
            expect(p.generation).toBeGreaterThanOrEqual(lastGeneration);
            lastGeneration = p.generation;
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
