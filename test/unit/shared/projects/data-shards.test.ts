// The shard-mode split of a data folder's files over a run's members: whole files, complete, disjoint, balanced,
// and a re-split that moves only what a member change forces.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { movedFiles, splitDataFiles, type DataFile, type DataFileSplit } from '../../../../src-shared/projects/data-shards';

const files = (sizes: number[]): DataFile[] => sizes.map((size, i) => ({ name: `part-${String(i).padStart(3, '0')}.jsonl`, size }));
const loadOf = (split: DataFileSplit, all: readonly DataFile[], key: string): number =>
  split[key]!.reduce((sum, name) => sum + all.find((f) => f.name === name)!.size, 0);

function expectValid(split: DataFileSplit, all: readonly DataFile[], ring: readonly string[]): void {
  expect(Object.keys(split).sort()).toEqual([...new Set(ring)].sort());
  const placed = Object.values(split).flat();
  expect(new Set(placed).size).toBe(placed.length); // disjoint
  expect([...placed].sort()).toEqual([...new Set(all.map((f) => f.name))].sort()); // complete
  const loads = Object.keys(split).map((k) => loadOf(split, all, k));
  const largest = Math.max(0, ...all.map((f) => f.size));
  expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(largest); // the stated bound
}

describe('splitDataFiles', () => {
  it.each([
    { sizes: [], ring: ['a', 'b'], want: { a: [], b: [] } },
    { sizes: [10], ring: ['a', 'b'], want: { a: ['part-000.jsonl'], b: [] } },
    { sizes: [10, 10, 10, 10], ring: ['a', 'b'], want: { a: ['part-000.jsonl', 'part-002.jsonl'], b: ['part-001.jsonl', 'part-003.jsonl'] } },
    { sizes: [50, 30, 20], ring: ['b', 'a'], want: { b: ['part-000.jsonl'], a: ['part-001.jsonl', 'part-002.jsonl'] } },
    { sizes: [5, 5, 5], ring: [], want: {} },
  ])('fresh split of $sizes over $ring', ({ sizes, ring, want }) => {
    expect(splitDataFiles(files(sizes), ring)).toEqual(want);
  });

  it('is deterministic whatever order the files come in', () => {
    const all = files([7, 3, 9, 1, 4, 4, 8, 2]);
    const once = splitDataFiles(all, ['x', 'y', 'z']);
    expect(splitDataFiles([...all].reverse(), ['x', 'y', 'z'])).toEqual(once);
  });

  it('kill one of three: only the dead member\'s files move', () => {
    const all = files([90, 80, 70, 60, 50, 40, 30, 20, 10, 10, 5, 5]);
    const before = splitDataFiles(all, ['alpha', 'beta', 'gamma']);
    const after = splitDataFiles(all, ['alpha', 'gamma'], before);
    expectValid(after, all, ['alpha', 'gamma']);
    for (const key of ['alpha', 'gamma']) for (const name of before[key]!) expect(after[key]).toContain(name);
    expect(movedFiles(before, after)).toBe(before.beta!.length);
  });

  it('a third joins: it takes files from the others and few move', () => {
    const all = files(Array.from({ length: 30 }, (_, i) => 10 + (i % 7)));
    const before = splitDataFiles(all, ['alpha', 'beta']);
    const after = splitDataFiles(all, ['alpha', 'beta', 'gamma'], before);
    expectValid(after, all, ['alpha', 'beta', 'gamma']);
    expect(after.gamma!.length).toBeGreaterThan(0);
    // Every move lands on the newcomer, and no more files move than a third of them plus one.
    expect(movedFiles(before, after)).toBe(after.gamma!.length);
    expect(after.gamma!.length).toBeLessThanOrEqual(Math.ceil(all.length / 3) + 1);
  });

  it('the same members and files: nothing moves; a new file goes to the least loaded member', () => {
    const all = files([40, 30, 20, 10]);
    const before = splitDataFiles(all, ['a', 'b']);
    expect(splitDataFiles(all, ['a', 'b'], before)).toEqual(before);
    const more = [...all, { name: 'new.jsonl', size: 5 }];
    const after = splitDataFiles(more, ['a', 'b'], before);
    expect(movedFiles(before, after)).toBe(0);
    expectValid(after, more, ['a', 'b']);
  });

  it('a previous split that broke the bound is mended, and files gone from the folder are dropped', () => {
    const all = files([10, 10, 10, 10]);
    const lopsided = { a: all.map((f) => f.name).concat('gone.jsonl'), b: [] };
    const after = splitDataFiles(all, ['a', 'b'], lopsided);
    expectValid(after, all, ['a', 'b']);
    expect(after.a).toHaveLength(2);
  });
});

describe('splitDataFiles properties', () => {
  const fileArb = fc.uniqueArray(fc.record({ name: fc.string({ minLength: 1, maxLength: 6 }), size: fc.nat({ max: 1000 }) }), {
    selector: (f) => f.name,
    maxLength: 40,
  });
  const ringArb = fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { minLength: 1, maxLength: 6 });

  it('complete, disjoint and within the bound, fresh or re-split', () => {
    fc.assert(
      fc.property(fileArb, ringArb, ringArb, (all, first, second) => {
        const before = splitDataFiles(all, first);
        expectValid(before, all, first);
        const after = splitDataFiles(all, second, before);
        expectValid(after, all, second);
      }),
      { numRuns: 300 },
    );
  });

  it('losing a member of a fresh split moves only that member\'s files', () => {
    fc.assert(
      fc.property(fileArb, ringArb, fc.nat(), (all, ring, cut) => {
        fc.pre(ring.length >= 2);
        const before = splitDataFiles(all, ring);
        const survivors = ring.filter((_, i) => i !== cut % ring.length);
        const after = splitDataFiles(all, survivors, before);
        const lost = ring[cut % ring.length]!;
        // A fresh split is within the bound, so the orphans' greedy placement keeps it and nothing else moves.
        for (const key of survivors) expect(after[key]).toEqual(expect.arrayContaining(before[key]!));
        expect(movedFiles(before, after)).toBe(before[lost]!.length);
      }),
      { numRuns: 200 },
    );
  });
});
