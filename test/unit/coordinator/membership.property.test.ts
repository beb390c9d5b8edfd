// Random sequences of what can happen to a cluster; after every step membership's invariants must hold.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LIVE_STATES } from '../../../src-main/core/coordinator/membership/member-record';
import { Membership } from '../../../src-main/core/coordinator/membership/membership';
import { assignShards } from '../../../src-shared/shards';
import { FakeClock } from './fake-clock';
import { fields } from './member-fields';

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
  | { op: 'leave'; pick: number };

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
);

describe('membership — property', () => {
  it('never more machines joined than the bound; a join is refused only at the bound; one record per name; ids unique; incarnations never go down', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 5000 }), fc.array(opArb, { maxLength: 120 }), (max, samples, ops) => {
        const clock = new FakeClock();
        const p = new Membership({ clock, heartbeatTimeoutMs: 2000, maxMachines: max });
        const incarnations = new Map<number, number>();
        const idOf = (n: number) => {
          const all = p.allWorkers();
          return all.length === 0 ? 999 : all[n % all.length]!.id;
        };
        for (const o of ops) {
          switch (o.op) {
            case 'join': {
              const node = `n${o.node}`;
              const before = p.liveCount();
              const known = p.idForNode(node);
              const wasLive = known !== undefined && LIVE_STATES.has(p.worker(known)!.state);
              const r = known === undefined ? p.add(fields(node)) : p.rejoinWorker(known, fields(node));
              if (wasLive) {
                expect(r.ok ? '' : r.reason).toMatch(/is still (syncing|active|draining)$/);
              } else {
                // A new name or a machine coming back: refused only when the cluster is full, and then saying so.
                expect(r.ok).toBe(before < max);
                if (!r.ok) expect(r.reason).toMatch(/^the cluster is full: /);
              }
              break;
            }
            case 'activate':
              p.activateWorker(idOf(o.pick));
              break;
            case 'heartbeat': {
              const w = p.worker(idOf(o.pick));
              if (w && LIVE_STATES.has(w.state)) p.updateHeartbeat(w.id);
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
            case 'rejoin': {
              const w = p.worker(idOf(o.pick));
              if (w) p.rejoinWorker(w.id, fields(w.node));
              break;
            }
            case 'leave':
              p.leaveWorker(idOf(o.pick), 'left: agent shut down');
              break;
          }

          const all = p.allWorkers();
          const active = all.filter((w) => w.state === 'active');
          expect(p.liveCount()).toBeLessThanOrEqual(max);
          // ids unique, assigned from 0 upward; one record per node name
          const idList = all.map((w) => w.id);
          expect(new Set(idList).size).toBe(idList.length);
          expect([...idList].sort((a, b) => a - b)).toEqual(idList.map((_, i) => i));
          expect(new Set(all.map((w) => w.node)).size).toBe(all.length);
          for (const w of all) expect(p.idForNode(w.node)).toBe(w.id);
          // incarnations never go down
          for (const w of all) {
            expect(w.incarnation).toBeGreaterThanOrEqual(incarnations.get(w.id) ?? 1);
            incarnations.set(w.id, w.incarnation);
          }
          // the snapshot is the record
          expect(p.snapshots().map((s) => [s.id, s.state, s.incarnation])).toEqual(all.map((w) => [w.id, w.state, w.incarnation]));
          // shards over the active machines in join order: one each, contiguous from 0 to samples
          const shards = assignShards(samples, p.activeWorkerIds());
          expect(shards.map((s) => s.workerId).sort((a, b) => a - b)).toEqual(active.map((w) => w.id).sort((a, b) => a - b));
          let cursor = 0;
          for (const s of shards) {
            expect(s.start).toBe(cursor);
            cursor = s.end;
          }
          expect(cursor).toBe(active.length > 0 ? samples : 0);
        }
      }),
      { numRuns: 300 },
    );
  });
});
