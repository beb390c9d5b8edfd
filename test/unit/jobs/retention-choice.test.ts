// The retention rule's choice as a table: the oldest first, while over keepLast or maxTotalGb; a pinned artifact
// (its job running again, its bytes moving) is never chosen: kept beside the newest N, its bytes still counted.
import { describe, expect, it } from 'vitest';
import type { ArtifactRetention } from '../../../src-shared/jobs/artifact-retention';
import { chooseRemovals, type RetentionCandidate } from '../../../src-main/core/jobs/retention-choice';

const GB = 1e9;
/** a (oldest) … e (newest), 1 GB each unless said; `pinned` names the pinned ones. */
function list(pinned = '', sizes: Record<string, number> = {}): RetentionCandidate[] {
  return ['c', 'a', 'e', 'b', 'd'].map((name) => ({ sha256: name, createdAt: name.charCodeAt(0), sizeBytes: (sizes[name] ?? 1) * GB, pinned: pinned.includes(name) ? 'running' : null }));
}
const rule = (keepLast: number | null, maxTotalGb: number | null): ArtifactRetention => ({ keepLast, maxTotalGb });

describe('chooseRemovals', () => {
  it.each([
    ['no rule keeps all', list(), rule(null, null), ''],
    ['keepLast 3 removes the two oldest', list(), rule(3, null), 'a:beyond the newest 3 b:beyond the newest 3'],
    ['keepLast 5 of 5 keeps all', list(), rule(5, null), ''],
    ['keepLast 10 keeps all', list(), rule(10, null), ''],
    ['keepLast 1 keeps only the newest', list(), rule(1, null), 'a:beyond the newest 1 b:beyond the newest 1 c:beyond the newest 1 d:beyond the newest 1'],
    ['a pinned old one is kept beside the newest 3, not instead of one', list('a'), rule(3, null), 'b:beyond the newest 3'],
    ['a pinned one among the newest changes nothing', list('d'), rule(3, null), 'a:beyond the newest 3 b:beyond the newest 3'],
    ['all pinned: nothing goes', list('abcde'), rule(1, null), ''],
    ['maxTotalGb 3 of 5 GB removes two', list(), rule(null, 3), 'a:over 3 GB b:over 3 GB'],
    ['maxTotalGb 5 of 5 GB keeps all', list(), rule(null, 5), ''],
    ['a big oldest one alone brings it under', list('', { a: 4 }), rule(null, 5), 'a:over 5 GB'],
    ['size counts pinned bytes: the unpinned go', list('a', { a: 4 }), rule(null, 5), 'b:over 5 GB c:over 5 GB d:over 5 GB'],
    ['both: count first names the reason', list(), rule(4, 2), 'a:beyond the newest 4 b:over 2 GB c:over 2 GB'],
  ])('%s', (_what, candidates, r, expected) => {
    expect(chooseRemovals(candidates, r).map((x) => `${x.sha256}:${x.why}`).join(' ')).toBe(expected);
  });
});
