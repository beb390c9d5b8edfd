/** How a cluster problem is written for a person: compiler style, so editors and terminals can jump to it. */
import type { ClusterIssue } from './types';

/** `['nodes', 0, 'gpus', 1, 'vram_mb']` → `nodes[0].gpus[1].vram_mb`. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out;
}

/** `cluster.yaml:12:9: error: message`, or `cluster.yaml: error: message` when the place is unknown. */
export function formatIssue(issue: ClusterIssue, fileName: string): string {
  const place = issue.line !== undefined ? `${fileName}:${issue.line}:${issue.col ?? 1}` : fileName;
  return `${place}: ${issue.severity}: ${issue.message}`;
}
