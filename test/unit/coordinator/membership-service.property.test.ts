// Random histories of runs and machines through the coordinator service: whatever runs are live, of whatever
// size, a join is refused only when the cluster's own bound is reached, and then with the cluster's sentence.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiProblem } from '../../../src-main/core/coordinator/service/coordinator-service';
import { Harness, type SimWorker } from './harness';

type Op =
  | { op: 'join'; node: number }
  | { op: 'start'; min: number; max: number }
  | { op: 'stop'; pick: number }
  | { op: 'leave'; pick: number }
  | { op: 'round'; silent: number; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('join' as const), node: fc.nat({ max: 9 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('start' as const), min: fc.integer({ min: 1, max: 3 }), max: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('stop' as const), pick: fc.nat({ max: 9 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('leave' as const), pick: fc.nat({ max: 9 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('round' as const), silent: fc.integer({ min: -1, max: 9 }), ms: fc.integer({ min: 200, max: 4000 }) }) },
);

const LIVE = new Set(['syncing', 'active', 'draining']);

describe('membership through the service — property', () => {
  it('no join is refused because of a run: only at the cluster bound, with its sentence', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(opArb, { minLength: 1, maxLength: 60 }), (bound, ops) => {
        const h = new Harness({ heartbeatTimeoutMs: 3000, maxWorkers: bound });
        const sims = new Map<number, SimWorker>();
        for (const o of ops) {
          switch (o.op) {
            case 'join': {
              const sim = sims.get(o.node) ?? h.worker(`n${o.node}`);
              const known = h.svc.workers().find((w) => w.node === sim.node);
              const liveBefore = h.svc.workers().filter((w) => LIVE.has(w.state)).length;
              // A live machine joining again replaces its own session (it counts already); anything else needs room.
              const room = (known !== undefined && LIVE.has(known.state)) || liveBefore < bound;
              let refused: ApiProblem | null = null;
              try {
                sim.running = null;
                sim.join();
                sims.set(o.node, sim);
              } catch (e) {
                if (!(e instanceof ApiProblem)) throw e;
                refused = e;
              }
              expect(refused === null, refused?.message).toBe(room);
              if (refused) {
                expect(refused.status).toBe(409);
                expect(refused.message).toBe(`${sim.node} cannot join: the cluster is full: ${bound} of ${bound} machines joined (start the coordinator with gpu-share serve --max-workers N to allow more)`);
              }
              break;
            }
            case 'start':
              try {
                h.svc.startRun(h.spec({ minWorkers: Math.min(o.min, o.max), maxWorkers: o.max }));
              } catch (e) {
                if (!(e instanceof ApiProblem)) throw e;
              }
              break;
            case 'stop': {
              const live = h.svc.runs().filter((r) => !['finished', 'failed', 'stopped'].includes(r.state));
              const r = live[o.pick % Math.max(1, live.length)];
              if (r) h.svc.stopRun(r.id);
              break;
            }
            case 'leave': {
              const s = [...sims.values()][o.pick % Math.max(1, sims.size)];
              const w = s && h.svc.workers().find((x) => x.id === s.workerId);
              if (s && w && LIVE.has(w.state) && w.incarnation === s.incarnation) h.svc.leave(s.workerId, { incarnation: s.incarnation, reason: 'agent shut down' });
              break;
            }
            case 'round': {
              h.clock.advance(o.ms);
              [...sims.values()].forEach((s, i) => {
                if (i === o.silent) return;
                try {
                  s.beat();
                } catch (e) {
                  if (!(e instanceof ApiProblem)) throw e;
                }
              });
              h.svc.tick();
              break;
            }
          }
          expect(h.svc.workers().filter((w) => LIVE.has(w.state)).length).toBeLessThanOrEqual(bound);
        }
      }),
      { numRuns: 150 },
    );
  });
});
