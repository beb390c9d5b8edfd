/**
 * What `runs start` and `runs show` print about a run's project (issue 23): the snapshot (short and full hash),
 * its files and bytes, the data folder and mode, the notes the coordinator made when it took it, each member's
 * project status, and the run's output artifact with the command that downloads it.
 */
import type { RunSnapshot } from '../../../../src-shared/training';
import { humanBytes } from '../jobs/job-format';

const short = (hash: string): string => hash.slice(0, 12);

/** After `runs start`: which snapshot the run ships, and what was noted while taking it. */
export function projectStartLines(run: RunSnapshot): string[] {
  const p = run.project;
  if (!p) return [];
  return [`Project ${p.dir}: snapshot ${short(p.snapshot)} (${p.files} files, ${humanBytes(p.bytes)})`, ...p.notes.map((n) => `  ${n}`)];
}

/** The run's project and output lines for `runs show` (none for a run without either). */
export function projectDetailLines(run: RunSnapshot): string[] {
  const lines: string[] = [];
  const p = run.project;
  if (p) {
    lines.push(`  project    ${p.dir}`);
    lines.push(`  snapshot   ${short(p.snapshot)} (${p.snapshot}), ${p.files} files, ${humanBytes(p.bytes)}`);
    lines.push(`  data       ${p.data === null ? 'none' : `${p.data} (${p.dataMode}${p.dataMode === 'shard' ? ': its files split over the members' : ': every member gets all of it'})`}`);
    if (p.modules.length > 0) lines.push(`  checks     ${p.modules.map((m) => `${m.module} (${m.source})`).join(', ')}`);
    for (const note of p.notes) lines.push(`  note       ${note}`);
    for (const m of p.members) lines.push(`  on ${m.node.padEnd(7)} ${m.status}${m.detail ? `: ${m.detail}` : ''}`);
  }
  const a = run.artifact;
  if (a) {
    const partial = a.partial ? ', partial: the run did not finish' : '';
    lines.push(`  output     ${humanBytes(a.sizeBytes)} from ${a.node}${partial}, sha256 ${a.sha256}`);
    lines.push(`             download it: gpu-share runs artifact ${run.id}`);
  }
  return lines;
}
