/** Worker-list diffs: one changed worker of 1,000 is a diff of one, and a diff applied gives the new list. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { applyWorkersDiff, diffWorkers, isEmptyWorkersDiff } from '../../../src-shared/worker-diff';
import { workerSnapshot } from '../helpers/snapshots';

function worker(id: number, extra: Partial<WorkerSnapshot> = {}): WorkerSnapshot {
  const gpus = [{ uuid: `GPU-${id}`, name: 'RTX 4090', vramTotalMb: 24564 }];
  return workerSnapshot(id, { node: `node-${id}`, gpus, backend: 'cuda', joinedAt: 1000 + id, lastHeartbeatAt: 5000, address: '10.0.0.2', local: false, ...extra });
}

const thousand = Array.from({ length: 1000 }, (_, i) => worker(i));

describe('diffWorkers', () => {
  it('1,000 workers with one changed make a diff of one', () => {
    const next = thousand.map((w) => (w.id === 617 ? { ...w, lastHeartbeatAt: 6000 } : { ...w, gpus: w.gpus.map((g) => ({ ...g })) }));
    const diff = diffWorkers(thousand, next);
    expect(diff.upsert).toEqual([next[617]]);
    expect(diff.removed).toEqual([]);
    expect(JSON.stringify(diff).length).toBeLessThan(JSON.stringify(next).length / 500);
  });

  it('sees a change deep inside a snapshot (a GPU) and a field it was never told about', () => {
    const gpu = thousand.map((w) => (w.id === 3 ? { ...w, gpus: [{ ...w.gpus[0]!, vramTotalMb: 8192 }] } : w));
    expect(diffWorkers(thousand, gpu).upsert.map((w) => w.id)).toEqual([3]);
    const extra = thousand.map((w) => (w.id === 4 ? ({ ...w, addedLater: true } as WorkerSnapshot) : w));
    expect(diffWorkers(thousand, extra).upsert.map((w) => w.id)).toEqual([4]);
  });

  it('lists new workers as upserts and gone ones as removed ids', () => {
    const prev = [worker(1), worker(2), worker(3)];
    const next = [worker(1), worker(3, { state: 'failed' }), worker(4)];
    expect(diffWorkers(prev, next)).toEqual({ upsert: [next[1], next[2]], removed: [2] });
  });

  it('is empty when nothing changed, and from nothing is the whole list', () => {
    expect(isEmptyWorkersDiff(diffWorkers(thousand, thousand.map((w) => ({ ...w }))))).toBe(true);
    expect(diffWorkers([], thousand).upsert).toHaveLength(1000);
  });
});

describe('applyWorkersDiff', () => {
  it('applies a diff in id order, keeping unchanged workers as the same objects', () => {
    const list = [worker(1), worker(5), worker(9)];
    const out = applyWorkersDiff(list, { upsert: [worker(7), worker(5, { state: 'draining' })], removed: [1] });
    expect(out.map((w) => [w.id, w.state])).toEqual([[5, 'draining'], [7, 'active'], [9, 'active']]);
    expect(out[2]).toBe(list[2]);
  });

  it('returns the same list for an empty diff, and ignores removals of unknown ids', () => {
    const list = [worker(1), worker(2)];
    expect(applyWorkersDiff(list, { upsert: [], removed: [] })).toBe(list);
    expect(applyWorkersDiff(list, { upsert: [], removed: [42] })).toEqual(list);
  });

  /** Lists of workers with distinct ids in any order, with some fields varied. */
  const workerList = fc
    .uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 30 })
    .chain((ids) =>
      fc.tuple(
        ...ids.map((id) =>
          fc.record({ state: fc.constantFrom('syncing', 'active', 'draining', 'failed', 'left' as const), step: fc.option(fc.nat(5)), vram: fc.nat(3) }).map(
            ({ state, step, vram }) => worker(id, { state, step, gpus: [{ uuid: null, name: 'g', vramTotalMb: vram }] }),
          ),
        ),
      ),
    );

  it('prev + diff(prev, next) = next, ordered by id, for any two lists', () => {
    fc.assert(
      fc.property(workerList, workerList, (prev, next) => {
        const sortedPrev = [...prev].sort((a, b) => a.id - b.id);
        const applied = applyWorkersDiff(sortedPrev, diffWorkers(prev, next));
        expect(applied).toEqual([...next].sort((a, b) => a.id - b.id));
      }),
      { numRuns: 300 },
    );
  });

  it('a chain of diffs lands where the full lists do', () => {
    fc.assert(
      fc.property(fc.array(workerList, { minLength: 1, maxLength: 6 }), (lists) => {
        let held: WorkerSnapshot[] = [];
        let sent: WorkerSnapshot[] = [];
        for (const list of lists) {
          held = applyWorkersDiff(held, diffWorkers(sent, list));
          sent = list;
        }
        expect(held).toEqual([...lists.at(-1)!].sort((a, b) => a.id - b.id));
      }),
    );
  });
});
