/**
 * Which artifacts the retention rule removes (src-shared/jobs/artifact-retention.ts): the oldest first, while more
 * than keepLast are kept or they take more than maxTotalGb. An artifact that is pinned (its job runs again, or its
 * bytes are being uploaded or downloaded) is never chosen: it is kept beside the newest keepLast (never instead of
 * one), and its bytes still count toward maxTotalGb, which is then met by removing other old ones, or not at all. Pure, so the choice is tested as a table (test/unit/jobs/retention-choice.test.ts).
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
  // The newest keepLast are kept whatever else is pinned: a pinned older one is kept beside them, never instead.
  const beyond = new Set(rule.keepLast === null ? [] : oldestFirst.slice(0, Math.max(0, oldestFirst.length - rule.keepLast)).map((c) => c.sha256));
  let total = oldestFirst.reduce((sum, c) => sum + c.sizeBytes, 0);
  const removals: RetentionRemoval[] = [];
  for (const c of oldestFirst) {
    const overCount = beyond.has(c.sha256);
    const overSize = rule.maxTotalGb !== null && total > rule.maxTotalGb * GB;
    if (!overCount && !overSize) break;
    if (c.pinned !== null) continue;
    removals.push({ sha256: c.sha256, sizeBytes: c.sizeBytes, why: overCount ? `beyond the newest ${rule.keepLast}` : `over ${rule.maxTotalGb} GB` });
    total -= c.sizeBytes;
  }
  return removals;
}
