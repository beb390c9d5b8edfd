/**
 * The artifact retention rule (issue 25, housekeeping): how many artifacts the coordinator keeps and how much disk
 * they may take. A runtime setting kept in state.db (set from the Artifacts view, `gpu-share jobs artifacts
 * --keep-last/--max-total-gb` or POST /v1/artifacts/retention), shared here so the page, the CLI and the
 * coordinator read and bound it the same way. Either limit may be off (null); both off keeps everything.
 */
import { z } from 'zod';

export const MAX_KEEP_LAST = 1_000_000;
export const MAX_TOTAL_GB = 1_000_000;

export interface ArtifactRetention {
  /** Keep only the newest N artifacts; null: no count limit. */
  keepLast: number | null;
  /** Keep at most this many GB (10^9 bytes) of artifacts, oldest removed first; null: no size limit. */
  maxTotalGb: number | null;
}

export const NO_RETENTION: ArtifactRetention = { keepLast: null, maxTotalGb: null };

export const artifactRetentionSchema = z
  .object({
    keepLast: z.number().int('keepLast is a whole number of artifacts').min(1, 'keepLast is at least 1 (null keeps every artifact)').max(MAX_KEEP_LAST).nullable(),
    maxTotalGb: z.number().positive('maxTotalGb is more than 0 (null sets no size limit)').max(MAX_TOTAL_GB).nullable(),
  })
  .strict();

/** What GET /v1/artifacts and the Artifacts view show beside the list: the rule and what is kept under it. */
export interface ArtifactHousekeeping {
  retention: ArtifactRetention;
  count: number;
  totalBytes: number;
}

/** The rule in words: "keep the newest 5 and at most 2 GB", or "keep every artifact". */
export function describeRetention(rule: ArtifactRetention): string {
  const parts = [rule.keepLast === null ? null : `the newest ${rule.keepLast}`, rule.maxTotalGb === null ? null : `at most ${rule.maxTotalGb} GB`].filter((p) => p !== null);
  return parts.length === 0 ? 'keep every artifact' : `keep ${parts.join(' and ')}`;
}
