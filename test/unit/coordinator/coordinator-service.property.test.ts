// Random histories of a cluster against the service: it only ever refuses with ApiProblem, and the live run
// always trains on active workers only, with disjoint and complete shards.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiProblem } from '../../../src-main/core/coordinator/service/coordinator-service';
import { Harness, SimWorker } from './harness';

type Op =
  | { op: 'join'; node: number; other: boolean }
  | { op: 'beat'; w: number }
  | { op: 'round'; skip: number; ms: number }
  | { op: 'stale'; w: number }
  | { op: 'advance'; ms: number }
  | { op: 'start'; min: number; extra: number; restarts: number; samples: number }
  | { op: 'stop' }
  | { op: 'drain'; w: number }
  | { op: 'leave'; w: number }
  | { op: 'exit'; w: number; code: number }
  | { op: 'exitAll'; code: number }
  | { op: 'progress'; w: number; step: number };

const w = fc.nat({ max: 5 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ op: fc.constant('join' as const), node: fc.nat({ max: 5 }), other: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('beat' as const), w }) },
  // a second passes and every worker but one (or none) heartbeats
  { weight: 8, arbitrary: fc.record({ op: fc.constant('round' as const), skip: fc.integer({ min: -3, max: 5 }), ms: fc.integer({ min: 200, max: 1200 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('stale' as const), w }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 4000 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('start' as const),
      min: fc.integer({ min: 1, max: 3 }),
      extra: fc.nat({ max: 3 }),
      restarts: fc.nat({ max: 3 }),
      samples: fc.nat({ max: 1000 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('stop' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('drain' as const), w }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('leave' as const), w }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('exit' as const), w, code: fc.constantFrom(0, 0, 1, 137) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('exitAll' as const), code: fc.constantFrom(0, 1) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('progress' as const), w, step: fc.nat({ max: 500 }) }) },
);

function tolerate(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof ApiProblem)) throw e;
    expect([400, 404, 409, 422]).toContain(e.status);
  }
}

describe('CoordinatorService — property', () => {
  it('survives any history: only ApiProblems, no machine in two CPU runs, members active, shards disjoint and complete, generations only go up', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4 }), fc.array(opArb, { minLength: 1, maxLength: 80 }), (startAfter, ops) => {
        // Most histories start with three workers and a run, so the interesting states are reached.
        ops = [
          { op: 'join', node: 0, other: false },
          { op: 'join', node: 1, other: false },
          { op: 'join', node: 2, other: false },
          ...ops.slice(0, startAfter),
          { op: 'round', skip: -1, ms: 1000 },
          { op: 'start', min: 1 + (startAfter % 2), extra: 2, restarts: startAfter % 3, samples: 997 },
          ...ops.slice(startAfter),
        ];
        const h = new Harness({ heartbeatTimeoutMs: 3000 });
        const sims = new Map<string, SimWorker>();
        const generations = new Map<string, number>();
        let lastSeq = 0;
        const pick = (i: number) => {
          const all = [...sims.values()];
          return all.length ? all[i % all.length]! : null;
        };
        for (const o of ops) {
          switch (o.op) {
            case 'join': {
              const key = `n${o.node}${o.other ? '@b' : ''}`;
              const sim = sims.get(key) ?? h.worker(`n${o.node}`, { address: o.other ? '10.0.0.2' : '127.0.0.1' });
              sims.set(key, sim);
              tolerate(() => {
                sim.running = null;
                sim.join();
              });
              break;
            }
            case 'beat':
              tolerate(() => pick(o.w)?.beat());
              break;
            case 'stale': {
              const s = pick(o.w);
              if (s && s.workerId >= 0) tolerate(() => h.svc.heartbeat(s.workerId, { incarnation: s.incarnation + 1 }));
              break;
            }
            case 'round':
              h.clock.advance(o.ms);
              [...sims.values()].forEach((x, i) => i !== o.skip && tolerate(() => x.beat()));
              h.svc.tick();
              break;
            case 'advance':
              h.clock.advance(o.ms);
              h.svc.tick();
              break;
            case 'start':
              tolerate(() => h.svc.startRun(h.spec({ minWorkers: o.min, maxWorkers: o.min + o.extra, maxRestarts: o.restarts, samples: o.samples })));
              break;
            case 'stop': {
              const r = h.svc.runs().at(-1);
              if (r) tolerate(() => h.svc.stopRun(r.id));
              break;
            }
            case 'drain': {
              const s = pick(o.w);
              if (s && s.workerId >= 0) tolerate(() => h.svc.drainWorker(s.workerId));
              break;
            }
            case 'leave': {
              const s = pick(o.w);
              if (s && s.workerId >= 0) tolerate(() => h.svc.leave(s.workerId, { incarnation: s.incarnation, reason: 'agent shut down' }));
              break;
            }
            case 'exit': {
              const s = pick(o.w);
              if (s?.running) tolerate(() => s.exit(o.code === 137 ? null : o.code, o.code === 137 ? 9 : null));
              break;
            }
            case 'exitAll':
              for (const x of sims.values()) if (x.running) tolerate(() => x.exit(o.code));
              break;
            case 'progress': {
              const s = pick(o.w);
              if (s?.running) s.setStep(o.step, 1 / (o.step + 1), 10, null);
              break;
            }
          }

          const workers = h.svc.workers();
          const runs = h.svc.runs();
          // Several runs may be live; a CPU-only machine is a member of at most one of them at a time.
          const memberships = runs.filter((r) => r.state === 'running').flatMap((r) => r.workerIds);
          expect(new Set(memberships).size).toBe(memberships.length);
          expect(new Set(workers.map((x) => x.id)).size).toBe(workers.length);
          for (const r of runs) {
            expect(r.generation).toBeGreaterThanOrEqual(generations.get(r.id) ?? 0);
            generations.set(r.id, r.generation);
            if (r.state !== 'failed') expect(r.restartsUsed).toBeLessThanOrEqual(r.spec.maxRestarts);
            if (r.state !== 'running') {
              if (r.state !== 'paused' && r.state !== 'waiting') expect(r.endedAt).not.toBeNull();
              continue;
            }
            expect(r.workerIds.length).toBeGreaterThanOrEqual(r.spec.minWorkers);
            expect(r.workerIds.length).toBeLessThanOrEqual(r.spec.maxWorkers);
            for (const id of r.workerIds) expect(workers.find((x) => x.id === id)?.state).toBe('active');
            const map = r.shardHistory.at(-1)!;
            expect(map.generation).toBe(r.generation);
            expect(map.shards.map((s) => s.workerId)).toEqual(r.workerIds);
            let cursor = 0;
            for (const s of map.shards) {
              expect(s.start).toBe(cursor);
              cursor = s.end;
            }
            expect(cursor).toBe(r.spec.samples);
          }
          for (const e of h.svc.events()) {
            if (e.seq <= lastSeq) continue;
            expect(e.message.length).toBeGreaterThan(0);
            lastSeq = e.seq;
          }
        }
      }),
      { numRuns: 400 },
    );
    // 400 histories that now keep several runs live (a start is no longer refused), each checked after every step.
  }, 30_000);
});
