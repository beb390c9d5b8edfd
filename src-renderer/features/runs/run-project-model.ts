/**
 * How a run's project reads on its page (pure, for unit tests): what the snapshot holds, each member's status
 * with the progress its detail carries ("fetching the project: 3.1 of 12 MiB"), and the output's file name.
 */
import type { RunArtifact, RunProject, RunProjectMember } from '../../../src-shared/training';
import type { Badge } from '../../store/derive';
import { formatBytes, shortSha } from '../jobs/job-format';

const MEMBER_BADGES: Record<RunProjectMember['status'], Badge> = {
  fetching: { tone: 'info', text: 'Fetching' },
  ready: { tone: 'ok', text: 'Ready' },
  failed: { tone: 'bad', text: 'Failed' },
};

export function memberBadge(member: RunProjectMember): Badge {
  return { ...MEMBER_BADGES[member.status], detail: member.detail };
}

const UNIT_BYTES: Record<string, number> = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, KB: 1e3, MB: 1e6, GB: 1e9 };

/** The fraction fetched, from "3.1 of 12 MiB" or "3.1 MiB of 12 MiB" in a fetching member's detail; null when it says none. */
export function fetchedFraction(member: RunProjectMember): number | null {
  if (member.status !== 'fetching') return null;
  const m = /([\d.]+)\s*([KMG]i?B|B)?\s+of\s+([\d.]+)\s*([KMG]i?B|B)\b/.exec(member.detail);
  if (!m) return null;
  const total = Number(m[3]) * (UNIT_BYTES[m[4]!] ?? 1);
  const done = Number(m[1]) * (UNIT_BYTES[m[2] ?? m[4]!] ?? 1);
  if (!Number.isFinite(total) || !Number.isFinite(done) || total <= 0) return null;
  return Math.min(1, Math.max(0, done / total));
}

/** "42 files · 3.1 MiB". */
export function snapshotSizeText(project: Pick<RunProject, 'files' | 'bytes'>): string {
  return `${project.files} file${project.files === 1 ? '' : 's'} · ${formatBytes(project.bytes)}`;
}

/** "data (shard: split over the members)", or "none". */
export function dataText(project: Pick<RunProject, 'data' | 'dataMode'>): string {
  if (!project.data) return 'none';
  return `${project.data}/ (${project.dataMode === 'shard' ? 'shard: its files split over the members' : 'replicate: every member has all of it'})`;
}

/** `<run name>-output-<sha12>[-partial].tar.gz`, a plain file name everywhere. */
export function outputFileName(runName: string, artifact: Pick<RunArtifact, 'sha256' | 'partial'>): string {
  const safe = runName.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '') || 'run';
  return `${safe}-output-${shortSha(artifact.sha256)}${artifact.partial ? '-partial' : ''}.tar.gz`;
}
