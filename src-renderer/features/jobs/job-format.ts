/**
 * How jobs, artifacts and GPU budgets read on screen: status badges, the counts line, progress, VRAM held and
 * measured, a download's file name. Pure, so the wording is pinned by tests.
 */
import type { ArtifactSnapshot, GpuLedger, JobProgress, JobSnapshot, JobStatus, SweepCounts } from '../../../src-shared/jobs/types';
import { stepsFraction, stepsOfTotal } from '../../../src-shared/runs/steps-done';
import { pctOf, type Badge } from '../../store/derive';

const STATUS_BADGES: Record<JobStatus, Badge> = {
  pending: { tone: 'info', text: 'Pending' },
  claimed: { tone: 'info', text: 'Starting' },
  running: { tone: 'ok', text: 'Running' },
  completed: { tone: 'ok', text: 'Completed' },
  failed: { tone: 'bad', text: 'Failed' },
  cancelled: { tone: 'neutral', text: 'Cancelled' },
};

export function jobStatusBadge(status: JobStatus): Badge {
  return STATUS_BADGES[status];
}

/** Statuses a person may cancel (the job still waits or runs) and requeue (it has ended). */
export function canCancel(status: JobStatus): boolean {
  return status === 'pending' || status === 'claimed' || status === 'running';
}

export function canRequeue(status: JobStatus): boolean {
  return status === 'failed' || status === 'cancelled' || status === 'completed';
}

/** MB as GiB with one decimal ("12.0"), the unit the manifest's min_vram_gib and the placement reasons use. */
export function formatGib(mb: number | null | undefined): string {
  if (mb === null || mb === undefined || !Number.isFinite(mb)) return '—';
  return (mb / 1024).toFixed(1);
}

/** "2 pending · 3 running · 5 completed · 1 failed"; claimed jobs count as running, cancelled only when there are some. */
export function countsLine(counts: SweepCounts): string {
  const parts = [`${counts.pending} pending`, `${counts.claimed + counts.running} running`, `${counts.completed} completed`, `${counts.failed} failed`];
  if (counts.cancelled > 0) parts.push(`${counts.cancelled} cancelled`);
  return parts.join(' · ');
}

export interface JobProgressModel {
  text: string;
  /** 0..1, null without a known total. */
  fraction: number | null;
}

export function jobProgress(progress: JobProgress | null): JobProgressModel {
  if (!progress) return { text: '—', fraction: null };
  const { step, totalSteps, loss } = progress;
  const steps = `step ${stepsOfTotal(step, totalSteps)}`;
  const lossText = loss !== null && Number.isFinite(loss) ? ` · loss ${Number(loss.toPrecision(4))}` : '';
  const fraction = stepsFraction(step, totalSteps);
  return { text: steps + lossText, fraction };
}

/** "4.0 GiB held · peak 3.1" (a CPU job holds none: "CPU"). */
export function jobVramText(job: Pick<JobSnapshot, 'gpuIndex' | 'heldVramMb' | 'measuredPeakMb' | 'status'>): string {
  const peak = job.measuredPeakMb === null ? '' : ` · peak ${formatGib(job.measuredPeakMb)}`;
  if (job.gpuIndex === null) {
    if (job.status === 'pending' || job.heldVramMb === 0) return peak ? `CPU${peak}` : '—';
    return `${formatGib(job.heldVramMb)} GiB${peak}`;
  }
  return `${formatGib(job.heldVramMb)} GiB held${peak}`;
}

/** "desk · GPU 1", or the node alone for a CPU job. */
export function jobPlace(job: Pick<JobSnapshot, 'node' | 'gpuIndex'>): string {
  if (!job.node) return '—';
  return job.gpuIndex === null ? job.node : `${job.node} · GPU ${job.gpuIndex}`;
}

export function shortSha(sha256: string): string {
  return sha256.slice(0, 12);
}

/** `<job or run name>-<sha12>.tar.gz`, the name's unsafe characters made dashes so it is a plain file name everywhere. */
export function artifactFileName(artifact: Pick<ArtifactSnapshot, 'sha256' | 'producedBy' | 'runs'>): string {
  const name = artifact.producedBy[0]?.jobName ?? artifact.runs?.[0]?.runName ?? 'artifact';
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '') || 'artifact';
  return `${safe}-${shortSha(artifact.sha256)}.tar.gz`;
}

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value >= 100 ? 0 : 1)} ${units[unit]}`;
}

/** "sweep-r8 (attempt 1), sweep-r8b (attempt 2)"; a run's output: "run r3 · my run (partial: stopped)". */
export function producedByText(artifact: Pick<ArtifactSnapshot, 'producedBy' | 'runs'>): string {
  const jobs = artifact.producedBy.map((p) => `${p.jobName} (attempt ${p.attempt})`);
  const runs = (artifact.runs ?? []).map((r) => `run ${r.runId} · ${r.runName}${r.partial ? ' (partial: stopped before it finished)' : ''}`);
  return [...jobs, ...runs].join(', ') || '—';
}

export interface GpuBudgetModel {
  /** Widths in percent of the usable reserve. */
  heldPct: number;
  measuredPct: number | null;
  over: boolean;
  text: string;
}

/** One GPU's ledger as a bar over its usable reserve: "held 12.0 of 20.4 GiB usable · measured 9.1". */
export function gpuBudget(gpu: GpuLedger): GpuBudgetModel {
  const measured = gpu.measuredMb === null ? '' : ` · measured ${formatGib(gpu.measuredMb)}`;
  return {
    heldPct: pctOf(gpu.heldMb, gpu.usableMb),
    measuredPct: gpu.measuredMb === null ? null : pctOf(gpu.measuredMb, gpu.usableMb),
    over: gpu.heldMb > gpu.usableMb || (gpu.measuredMb ?? 0) > gpu.usableMb,
    text: `held ${formatGib(gpu.heldMb)} of ${formatGib(gpu.usableMb)} GiB usable${measured}`,
  };
}
