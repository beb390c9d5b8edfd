/**
 * What `gpu-share jobs …` prints for people and for scripts: the queue as a table (and as the short JSON rows
 * `jobs list --json` promises), one job in full, a manifest's result or its errors at FILE:LINE:COL, artifacts.
 */
import type { ArtifactSnapshot, JobSnapshot, JobStatus, ManifestIssue, ManifestSubmitResult, NodeVerdict } from '../../../../src-shared/jobs/types';
import { stepsCell } from '../../../../src-shared/runs/steps-done';
import { formatTable, humanAgo, humanDuration, shellWords } from '../../text-format';

/** Hex digits of an id shown in tables: enough to tell thousands of jobs apart, short enough to type. */
export const SHORT_ID = 12;

export const JOB_STATUSES: readonly JobStatus[] = ['pending', 'claimed', 'running', 'completed', 'failed', 'cancelled'];

export function shortId(id: string): string {
  return id.slice(0, SHORT_ID);
}

/** `jobs list --json`: one row per job, exactly these fields (docs/cli.md). */
export interface JobListRow {
  id: string;
  name: string;
  status: JobStatus;
  node: string | null;
  attempts: number;
  reason: string | null;
  artifact: string | null;
}

export function jobListRows(jobs: readonly JobSnapshot[]): JobListRow[] {
  return jobs.map((j) => ({ id: j.id, name: j.name, status: j.status, node: j.node, attempts: j.attempts, reason: j.reason, artifact: j.artifact }));
}

/** "desk (GPU 0)", "cpu-box (CPU)", "-" when not placed. */
export function placeText(job: JobSnapshot): string {
  if (!job.node) return '-';
  return `${job.node} (${job.gpuIndex === null ? 'CPU' : `GPU ${job.gpuIndex}`})`;
}

function progressText(job: JobSnapshot): string {
  const p = job.progress;
  if (!p) return '-';
  return stepsCell(p.step, p.totalSteps);
}

/**
 * The jobs table. `status` is the --status the list was filtered by: with it, an empty list says no job is in that
 * status (the queue may hold others), not that the queue is empty.
 */
export function formatJobsTable(jobs: readonly JobSnapshot[], status: JobStatus | null = null): string {
  if (jobs.length === 0 && status !== null) return `No ${status} jobs. gpu-share jobs list (without --status) shows every job in the queue.\n`;
  if (jobs.length === 0) return 'No jobs. Submit a manifest: gpu-share jobs submit FILE (the format is in docs/jobs.md)\n';
  const rows = jobs.map((j) => [shortId(j.id), j.name, j.status, placeText(j), `${j.attempts}/${j.maxAttempts}`, progressText(j), j.reason ?? '-']);
  return `${formatTable(['ID', 'NAME', 'STATUS', 'NODE', 'ATTEMPTS', 'PROGRESS', 'REASON'], rows).join('\n')}\n`;
}

function gib(mb: number): string {
  return `${Number((mb / 1024).toFixed(1))} GiB`;
}

/** "4.2 MiB", "812 KiB", "96 B". */
export function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Number((bytes / 1024).toFixed(1))} KiB`;
  if (bytes < 1024 ** 3) return `${Number((bytes / 1024 ** 2).toFixed(1))} MiB`;
  return `${Number((bytes / 1024 ** 3).toFixed(2))} GiB`;
}

/** The constraints a manifest set, in words; "none" when it set none. */
function constraintsText(job: JobSnapshot): string {
  const s = job.spec;
  const parts = [
    s.requireCuda ? 'requires CUDA' : s.preferCuda ? 'prefers CUDA' : null,
    s.minVramGib > 0 ? `${s.minVramGib} GiB VRAM` : null,
    s.minRamGib > 0 ? `${s.minRamGib} GiB RAM` : null,
    s.minCores > 0 ? `${s.minCores} cores` : null,
    s.allowedHosts ? `only on ${s.allowedHosts.join(', ')}` : null,
    s.dataMb !== null && s.mflops !== null ? `estimates ${s.dataMb} MB of data, ${s.mflops} MFLOP` : null,
  ];
  return parts.filter((p) => p !== null).join(', ') || 'none';
}

function memoryText(job: JobSnapshot): string {
  const parts = [job.heldVramMb > 0 ? `holds ${gib(job.heldVramMb)}` : null, job.measuredPeakMb !== null ? `measured peak ${gib(job.measuredPeakMb)}` : null];
  const text = parts.filter((p) => p !== null).join(', ');
  return `${text || '-'}${job.overBudget ? ' — OVER what it declared' : ''}`;
}

function timesText(job: JobSnapshot, now: number): string {
  const parts = [`created ${humanAgo(job.createdAt, now)}`];
  if (job.startedAt) parts.push(`started ${humanAgo(job.startedAt, now)}`);
  if (job.finishedAt) parts.push(`finished ${humanAgo(job.finishedAt, now)}${job.startedAt ? ` (took ${humanDuration(job.finishedAt - job.startedAt)})` : ''}`);
  return parts.join(', ');
}

/** One job in full: spec, where and why, memory, progress, artifact, the placement verdicts, its last output. */
export function formatJobDetail(job: JobSnapshot, verdicts: readonly NodeVerdict[], outputTail: string, now: number): string {
  const s = job.spec;
  const hyper = Object.entries(s.hyper).map(([k, v]) => `${k}=${String(v)}`).join(', ');
  const p = job.progress;
  const lines = [
    `Job ${job.id}: ${job.name}${job.inManifest ? '' : ' (no longer in the manifest)'}`,
    `  status      ${job.status}${job.reason ? ` — ${job.reason}` : ''}`,
    `  attempts    ${job.attempts} of ${job.maxAttempts}`,
    `  node        ${placeText(job)}`,
    `  vram        ${memoryText(job)}`,
    `  progress    ${p ? `step ${progressText(job)}${p.loss !== null ? `, loss ${p.loss}` : ''}` : '-'}`,
    `  artifact    ${job.artifact ?? '-'}`,
    ...(job.metrics ? [`  metrics     ${Object.entries(job.metrics).map(([k, v]) => `${k} ${v}`).join(', ')} (its metrics.json)`] : []),
    `  command     ${shellWords(s.command)}`,
    `  model       ${s.model || '-'}${s.mode ? ` (mode ${s.mode})` : ''}, seed ${s.seed}`,
    `  hyper       ${hyper || '-'}`,
    ...(s.project ? [`  project     ${s.project.dir}, snapshot ${s.project.snapshot} (its command runs in that snapshot's folder)`] : []),
    `  constraints ${constraintsText(job)}`,
    `  times       ${timesText(job, now)}`,
  ];
  if (verdicts.length > 0) {
    lines.push('', 'Placement (where it could go, node by node)');
    for (const v of verdicts) lines.push(`  ${v.ok ? 'fits   ' : 'no     '} ${v.reason}`);
  }
  const tail = outputTail.replace(/\r\n/g, '\n').replace(/\n+$/, '');
  lines.push('', tail ? 'Last output' : 'No output yet');
  if (tail) lines.push(...tail.split('\n').map((l) => `  ${l}`));
  return `${lines.join('\n')}\n`;
}

/** `FILE:LINE:COL: message`, or as much of the place as is known. */
export function formatManifestIssue(issue: ManifestIssue, file: string): string {
  const place = issue.line === null ? file : `${file}:${issue.line}:${issue.col ?? 1}`;
  return `${place}: ${issue.message}`;
}

/** What a submit or reload did, for people; errors name `shownFile` (the path as typed). */
export function formatManifestResult(result: ManifestSubmitResult, shownFile: string): string {
  if (!result.ok) return `${result.errors.map((e) => formatManifestIssue(e, shownFile)).join('\n')}\n`;
  const lines = [`${shownFile}: ${result.added.length} added (pending), ${result.kept.length} kept as they were, ${result.missing.length} no longer in the manifest`];
  if (result.project) lines.push(`Project ${result.project.dir}: snapshot ${result.project.snapshot}${result.project.notes.map((n) => `\n  ${n}`).join('')}`);
  if (result.missing.length > 0) lines.push('Jobs no longer in the manifest stay until cancelled: gpu-share jobs cancel JOB');
  return `${lines.join('\n')}\n`;
}

/** "lora-r8 #1, lora-r8 #2": which job attempts made these bytes. */
function producedByText(a: ArtifactSnapshot): string {
  return a.producedBy.map((p) => `${p.jobName} #${p.attempt}`).join(', ') || '-';
}

export function formatArtifactsTable(artifacts: readonly ArtifactSnapshot[], now: number): string {
  if (artifacts.length === 0) return 'No artifacts yet: a job stores one when it completes.\n';
  const rows = [...artifacts].sort((a, b) => b.createdAt - a.createdAt).map((a) => [shortId(a.sha256), humanBytes(a.sizeBytes), humanAgo(a.createdAt, now), producedByText(a)]);
  return `${formatTable(['SHA256', 'SIZE', 'STORED', 'PRODUCED BY'], rows).join('\n')}\n`;
}
