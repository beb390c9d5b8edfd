/**
 * Which artifacts the retention rule removes (src-shared/jobs/artifact-retention.ts): the oldest first, while more
 * than keepLast are kept or they take more than maxTotalGb. An artifact that is pinned (its job runs again, or its
 * bytes are being uploaded or downloaded) is never chosen, but still counts: the rule is met by removing others,
 * or not at all. Pure, so the choice is tested as a table (test/unit/jobs/retention-choice.test.ts).
 */
import type { ArtifactRetention } from '../../../src-shared/jobs/artifact-retention';

export interface RetentionCandidate {
  sha256: string;
  sizeBytes: number;
  createdAt: number;
  /** Why it may not be removed now; null: it may. */
  pinned: string | null;
}

export interface RetentionRemoval {
  sha256: string;
  sizeBytes: number;
  /** The limit it was over, in words ("beyond the newest 3", "over 2 GB"). */
  why: string;
}

const GB = 1e9;

export function chooseRemovals(candidates: readonly RetentionCandidate[], rule: ArtifactRetention): RetentionRemoval[] {
  if (rule.keepLast === null && rule.maxTotalGb === null) return [];
  const oldestFirst = [...candidates].sort((a, b) => a.createdAt - b.createdAt || a.sha256.localeCompare(b.sha256));
  let count = oldestFirst.length;
  let total = oldestFirst.reduce((sum, c) => sum + c.sizeBytes, 0);
  const removals: RetentionRemoval[] = [];
  for (const c of oldestFirst) {
    const overCount = rule.keepLast !== null && count > rule.keepLast;
    const overSize = rule.maxTotalGb !== null && total > rule.maxTotalGb * GB;
    if (!overCount && !overSize) break;
    if (c.pinned !== null) continue;
    removals.push({ sha256: c.sha256, sizeBytes: c.sizeBytes, why: overCount ? `beyond the newest ${rule.keepLast}` : `over ${rule.maxTotalGb} GB` });
    count -= 1;
    total -= c.sizeBytes;
  }
  return removals;
}
