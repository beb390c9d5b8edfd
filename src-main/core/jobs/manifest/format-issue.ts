/** How a manifest problem is written for a person: compiler style, so editors and terminals can jump to it. */
import type { ManifestIssue } from '../../../../src-shared/jobs/types';

/** `sweep.toml:12:9: error: message`, or `sweep.toml: error: message` when the place is unknown. */
export function formatManifestIssue(issue: ManifestIssue, fileName: string): string {
  const place = issue.line !== null ? `${fileName}:${issue.line}:${issue.col ?? 1}` : fileName;
  return `${place}: error: ${issue.message}`;
}
