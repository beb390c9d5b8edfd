import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ProjectEntry } from '../../../src-shared/projects/project-protocol';
import { manifestHash, sortManifestEntries } from '../../../src-main/platform/projects/manifest-hash';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const entries: ProjectEntry[] = [
  { kind: 'file', path: 'train.py', sha256: A, size: 10, executable: false },
  { kind: 'link', path: 'data/latest', target: 'v2' },
  { kind: 'file', path: 'data/v2/x.bin', sha256: B, size: 3, executable: true },
];

describe('manifestHash', () => {
  it('is the sha256 of the canonical JSON with entries sorted by path', () => {
    const sorted = [entries[1], entries[2], entries[0]];
    const expected = createHash('sha256').update(JSON.stringify({ version: 1, entries: sorted })).digest('hex');
    expect(manifestHash({ entries })).toBe(expected);
    expect(manifestHash({ entries })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not depend on the order entries or their keys are given in', () => {
    const reordered: ProjectEntry[] = [
      { size: 3, executable: true, path: 'data/v2/x.bin', sha256: B, kind: 'file' },
      entries[0],
      { target: 'v2', path: 'data/latest', kind: 'link' },
    ];
    expect(manifestHash({ entries: reordered })).toBe(manifestHash({ entries }));
  });

  it('changes when any field of any entry changes', () => {
    const base = manifestHash({ entries });
    const variants: ProjectEntry[][] = [
      [{ ...entries[0], path: 'train2.py' } as ProjectEntry, entries[1], entries[2]],
      [{ ...entries[0], sha256: B } as ProjectEntry, entries[1], entries[2]],
      [{ ...entries[0], size: 11 } as ProjectEntry, entries[1], entries[2]],
      [{ ...entries[0], executable: true } as ProjectEntry, entries[1], entries[2]],
      [entries[0], { ...entries[1], target: 'v1' } as ProjectEntry, entries[2]],
      [entries[0], entries[2]],
    ];
    const hashes = new Set(variants.map((v) => manifestHash({ entries: v })));
    expect(hashes.size).toBe(variants.length);
    expect(hashes.has(base)).toBe(false);
  });

  it('sorts by plain string comparison (upper case before lower case)', () => {
    const sorted = sortManifestEntries([
      { kind: 'link', path: 'b', target: 'x' },
      { kind: 'link', path: 'B', target: 'x' },
      { kind: 'link', path: 'a/b', target: 'x' },
      { kind: 'link', path: 'a-b', target: 'x' },
    ]);
    expect(sorted.map((e) => e.path)).toEqual(['B', 'a-b', 'a/b', 'b']);
  });
});
